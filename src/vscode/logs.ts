import * as vscode from 'vscode';
import { oneLine, type LogEntry, type LoggingMessageNotificationParams, type TraceEvent } from '../core';
import { TRACE_LANGUAGE_ID } from './ids';

/** One LogOutputChannel per server: lifecycle, stderr, protocol warnings and notifications/message. */
export class ServerLogs implements vscode.Disposable {
  private readonly channels = new Map<string, vscode.LogOutputChannel>();
  private readonly views = new Map<string, vscode.LogOutputChannel>();

  /** The server's channel; every line written through it is made one line (see `oneLine`). */
  channel(server: string): vscode.LogOutputChannel {
    let view = this.views.get(server);
    if (!view) this.views.set(server, (view = oneLineChannel(this.raw(server))));
    return view;
  }

  private raw(server: string): vscode.LogOutputChannel {
    let channel = this.channels.get(server);
    if (!channel) {
      channel = vscode.window.createOutputChannel(`MCP Host: ${oneLine(server)}`, { log: true });
      this.channels.set(server, channel);
    }
    return channel;
  }

  write(server: string, entry: LogEntry): void {
    const c = this.raw(server);
    // A server's text must never start a line of its own: it could forge ours.
    const message = oneLine(entry.message);
    const text = entry.source === 'stderr' ? `[stderr] ${message}` : entry.source === 'server' ? message : `[${entry.source}] ${message}`;
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
    const c = this.raw(server);
    const text = oneLine(`[${m.logger ?? 'server'}] ${typeof m.data === 'string' ? m.data : JSON.stringify(m.data)}`);
    if (m.level === 'debug') c.debug(text);
    else if (m.level === 'info' || m.level === 'notice') c.info(text);
    else if (m.level === 'warning') c.warn(text);
    else c.error(text);
  }

  dispose(): void {
    for (const c of this.channels.values()) c.dispose();
    this.channels.clear();
    this.views.clear();
  }
}

const LINE_WRITERS = new Set<PropertyKey>(['trace', 'debug', 'info', 'warn', 'error', 'append', 'appendLine']);

/** The channel, with each message written to it escaped to one line; everything else passes through. */
function oneLineChannel(channel: vscode.LogOutputChannel): vscode.LogOutputChannel {
  return new Proxy(channel, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (!LINE_WRITERS.has(property)) return value.bind(target);
      return (message: unknown, ...args: unknown[]) => value.call(target, oneLine(message instanceof Error ? message.message : String(message)), ...args);
    },
  });
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

  constructor(private level: () => 'off' | 'messages' | 'verbose') {}

  show(): void {
    this.channel.show(true);
  }

  record(server: string, event: TraceEvent): void {
    const level = this.level();
    if (level === 'off') return;
    const m = event.message as { id?: string | number | null; method?: string; result?: unknown; error?: { code: number; message: string }; params?: unknown };
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
        const cancelled = m.method === 'notifications/cancelled' ? (m.params as { requestId?: string | number } | undefined)?.requestId : undefined;
        if (cancelled !== undefined) this.sent.delete(key(event.direction, cancelled));
      }
    } else {
      const request = this.sent.get(key(event.direction === 'in' ? 'out' : 'in'));
      this.sent.delete(key(event.direction === 'in' ? 'out' : 'in'));
      const rtt = request ? ` (${event.at - request.at} ms)` : '';
      const method = request?.method ?? 'response';
      line = m.error ? `${arrow} ${method} #${m.id} error ${m.error.code}${rtt}: ${m.error.message}` : `${arrow} ${method} #${m.id} result${rtt}`;
    }
    // Method, id, error code and message come from the server: the line stays one line.
    this.channel.appendLine(oneLine(`${timestamp(event.at)} [${server}] ${line}`));
    if (level === 'verbose') {
      const body = m.method !== undefined ? m.params : m.error ?? m.result;
      if (body !== undefined) this.channel.appendLine(indent(JSON.stringify(body, null, 2)));
    }
  }

  dispose(): void {
    this.channel.dispose();
  }
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
