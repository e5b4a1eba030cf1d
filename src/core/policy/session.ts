/**
 * A session: one conversation of one client with MCP Host's gate. A chat session of VS Code's
 * client, an agent's connection to the editor's gateway, and the one client of `mcp-host serve` are
 * each one. The gateway makes it when the connection opens and learns the client's name and version
 * from its `initialize`; the gate reads it with every request of the session (the audit names it,
 * the editor asks naming the agent), and the parts of the gate that remember something per session
 * (a flow guard's "untrusted content came in", the first use of a server an agent was allowed) keep
 * it in the session's own state, which ends with the session.
 */
import { randomUUID } from 'node:crypto';
import type { AuditedSession } from './types';

/** Which origin a session's requests have. */
export type SessionOrigin = 'chat' | 'agent';

/** The client as its `initialize` named itself (`clientInfo`). */
export interface SessionClient {
  name: string;
  version: string;
}

/** A slot of per-session state: made for a session the first time it is read, by `create`. */
export class SessionKey<T> {
  constructor(
    /** For diagnostics only. */
    readonly name: string,
    readonly create: (session: GateSession) => T,
  ) {}
}

export class GateSession {
  readonly id: string;
  /** When the connection opened (ms since the epoch). */
  readonly started: number;
  /** Set once the client's `initialize` has been seen. */
  client: SessionClient | undefined;
  private readonly slots = new Map<SessionKey<unknown>, unknown>();
  private endListeners: Array<() => void> = [];
  private _ended = false;

  constructor(
    readonly origin: SessionOrigin,
    /**
     * What the client came through: the shared server's name for the chat, the configuration entry
     * an agent runs (`claude-user`, `mcp-json`, …), `serve` for `mcp-host serve`.
     */
    readonly via: string,
    options: { id?: string; now?: () => number } = {},
  ) {
    this.id = options.id ?? randomUUID();
    this.started = (options.now ?? Date.now)();
  }

  /** This session's state of one kind, made on first use. */
  state<T>(key: SessionKey<T>): T {
    if (!this.slots.has(key)) this.slots.set(key, key.create(this));
    return this.slots.get(key) as T;
  }

  get ended(): boolean {
    return this._ended;
  }

  /** Called once when the session ends (at once if it has). */
  onDidEnd(listener: () => void): void {
    if (this._ended) listener();
    else this.endListeners.push(listener);
  }

  /** The connection closed: the state goes, and whoever waited is told. */
  end(): void {
    if (this._ended) return;
    this._ended = true;
    this.slots.clear();
    const listeners = this.endListeners;
    this.endListeners = [];
    for (const l of listeners) l();
  }

  /** As the audit records it. */
  audited(): AuditedSession {
    return this.client ? { id: this.id, client: { name: this.client.name, version: this.client.version } } : { id: this.id };
  }
}
