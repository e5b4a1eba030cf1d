import * as vscode from 'vscode';
import { oneLine, type LogEntry, type LoggingMessageNotificationParams, type TraceEvent } from '../../core';
import type { Redaction } from '../policy/secrets';
import { TRACE_LANGUAGE_ID } from '../common/ids';

/**
 * A server's log as the rest of the extension writes to it: every line passes the redactor, then is
 * escaped to one line (see `oneLine`), so a server's text can neither leak a secret nor forge a line.
 */
export interface ServerLog {
  trace(text: string): void;
  debug(text: string): void;
  info(text: string): void;
  warn(text: string): void;
  error(text: string): void;
  show(preserveFocus?: boolean): void;
}

/** One LogOutputChannel per server: lifecycle, stderr, protocol warnings and notifications/message. */
export class ServerLogs implements vscode.Disposable {
  private readonly channels = new Map<string, ServerLog & vscode.Disposable>();

  constructor(private readonly redactor: Redaction) {}

  channel(server: string): ServerLog {
    let channel = this.channels.get(server);
    if (!channel) {
      channel = redacting(vscode.window.createOutputChannel(`MCP Host: ${oneLine(server)}`, { log: true }), this.redactor);
      this.channels.set(server, channel);
    }
    return channel;
  }

  write(server: string, entry: LogEntry): void {
    const c = this.channel(server);
    const text =
      entry.source === 'stderr'
        ? `[stderr] ${entry.message}`
        : entry.source === 'server'
          ? entry.message
          : `[${entry.source}] ${entry.message}`;
    switch (entry.level) {
      case 'trace':
        return c.trace(text);
      case 'debug':
        return c.debug(text);
      case 'info':
        return c.info(text);
      case 'warning':
        return c.warn(text);
      case 'error':
        return c.error(text);
    }
  }

  /** The server's own log messages, at their level. */
  writeServerMessage(server: string, m: LoggingMessageNotificationParams): void {
    const c = this.channel(server);
    const text = `[${m.logger ?? 'server'}] ${typeof m.data === 'string' ? m.data : JSON.stringify(m.data)}`;
    if (m.level === 'debug') c.debug(text);
    else if (m.level === 'info' || m.level === 'notice') c.info(text);
    else if (m.level === 'warning') c.warn(text);
    else c.error(text);
  }

  dispose(): void {
    for (const c of this.channels.values()) c.dispose();
    this.channels.clear();
  }
}

interface SentRequest {
  method: string;
  at: number;
}

const MAX_OPEN_REQUESTS = 10_000;

/**
 * The "MCP Host Trace" channel: one line per message with time, server, direction, method, id
 * and, for responses, the round-trip time; `verbose` adds the JSON. Coloured by syntaxes/.
 */
export class ProtocolTrace implements vscode.Disposable {
  private readonly channel = vscode.window.createOutputChannel('MCP Host Trace', TRACE_LANGUAGE_ID);
  private readonly sent = new Map<string, SentRequest>();

  constructor(
    private level: () => 'off' | 'messages' | 'verbose',
    private readonly redactor: Redaction,
  ) {}

  show(): void {
    this.channel.show(true);
  }

  /** A line of our own among the server's messages: who caused the requests around it (VS Code's chat). */
  note(server: string, text: string): void {
    if (this.level() === 'off') return;
    this.channel.appendLine(oneLine(this.redactor.redact(`${timestamp(Date.now())} [${server}] ${text}`)));
  }

  record(server: string, event: TraceEvent): void {
    const level = this.level();
    if (level === 'off') return;
    const m = event.message as {
      id?: string | number | null;
      method?: string;
      result?: unknown;
      error?: { code: number; message: string };
      params?: unknown;
    };
    const arrow = event.direction === 'out' ? '→' : '←';
    // Requests are keyed by who sent them, so each side's ids stay apart.
    const key = (dir: 'in' | 'out', id: unknown = m.id) => `${server}\u0000${dir}\u0000${String(id)}`;
    let line: string;
    if (m.method !== undefined) {
      if (m.id !== undefined && m.id !== null) {
        this.sent.set(key(event.direction), { method: m.method, at: event.at });
        // A backstop for peers that never answer: keep the newest requests only.
        if (this.sent.size > MAX_OPEN_REQUESTS) this.sent.delete(this.sent.keys().next().value as string);
        line = `${arrow} ${m.method} #${m.id}`;
      } else {
        line = `${arrow} ${m.method}`;
        // A cancelled request may never be answered: forget it, so the map does not grow.
        const cancelled =
          m.method === 'notifications/cancelled' ? (m.params as { requestId?: string | number } | undefined)?.requestId : undefined;
        if (cancelled !== undefined) this.sent.delete(key(event.direction, cancelled));
      }
    } else {
      const request = this.sent.get(key(event.direction === 'in' ? 'out' : 'in'));
      this.sent.delete(key(event.direction === 'in' ? 'out' : 'in'));
      const rtt = request ? ` (${event.at - request.at} ms)` : '';
      const method = request?.method ?? 'response';
      line = m.error
        ? `${arrow} ${method} #${m.id} error ${m.error.code}${rtt}: ${m.error.message}`
        : `${arrow} ${method} #${m.id} result${rtt}`;
    }
    // What we send is redacted too (a secret typed as a tool argument stays out of the trace), and
    // method, id, error code and message come from the server: the line stays one line.
    this.channel.appendLine(oneLine(this.redactor.redact(`${timestamp(event.at)} [${server}] ${line}`)));
    if (level === 'verbose') {
      const body = m.method !== undefined ? m.params : (m.error ?? m.result);
      // Redacted before the cut at 20,000 characters, which could split a secret.
      if (body !== undefined) this.channel.appendLine(indent(this.redactor.redact(JSON.stringify(body, null, 2))));
    }
  }

  dispose(): void {
    this.channel.dispose();
  }
}

/**
 * The "MCP Host" channel: import reports, icon refusals, app messages, sampling notes. It names
 * servers and quotes what they sent, so it passes the same redactor as theirs; the redactor is
 * asked at each line, since it learns secrets as servers start.
 */
export function createMainLog(redactor: Redaction): ServerLog & vscode.Disposable {
  return redacting(vscode.window.createOutputChannel('MCP Host', { log: true }), redactor);
}

function redacting(channel: vscode.LogOutputChannel, redactor: Redaction): ServerLog & vscode.Disposable {
  const clean = (text: string) => oneLine(redactor.redact(text));
  return {
    trace: (text) => channel.trace(clean(text)),
    debug: (text) => channel.debug(clean(text)),
    info: (text) => channel.info(clean(text)),
    warn: (text) => channel.warn(clean(text)),
    error: (text) => channel.error(clean(text)),
    show: (preserveFocus) => channel.show(preserveFocus),
    dispose: () => channel.dispose(),
  };
}

function timestamp(at: number): string {
  const d = new Date(at);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

function indent(text: string): string {
  const limited = text.length > 20_000 ? `${text.slice(0, 20_000)}\n… (${text.length - 20_000} more characters)` : text;
  return limited
    .split('\n')
    .map((l) => `    ${oneLine(l)}`)
    .join('\n');
}
