import { Emitter } from 'vscode-jsonrpc/node';
import { definitionHash, type ServerDefinition } from './definition';
import type { ServerHandle } from './handle';

export interface ReconcileResult {
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: string[];
}

/**
 * Keeps one handle per configured server. Reconciling with new definitions starts added ones
 * (if autostart), stops removed ones, restarts changed ones and leaves the rest running.
 */
export class ServerRegistry {
  private readonly handles = new Map<string, { handle: ServerHandle; hash: string }>();
  private readonly changeEmitter = new Emitter<void>();
  /** Fires when servers are added, removed or replaced. */
  readonly onDidChange = this.changeEmitter.event;

  constructor(
    private readonly createHandle: (def: ServerDefinition) => ServerHandle,
    /** Whether a definition may start by itself (trust, enabled, autostart). */
    private readonly mayAutostart: (def: ServerDefinition) => boolean,
  ) {}

  get all(): ServerHandle[] {
    return [...this.handles.values()].map((e) => e.handle);
  }

  get(name: string): ServerHandle | undefined {
    return this.handles.get(name)?.handle;
  }

  /**
   * Resolves once removed and changed servers have stopped (a stop abandons a start under way, so
   * that is quick). The starts it asks for go on after it: a start can wait for a person's answer
   * or a slow handshake, and each reports its failure in its own handle's state; `start()` of a
   * handle joins its start.
   */
  async reconcile(definitions: ServerDefinition[]): Promise<ReconcileResult> {
    const result: ReconcileResult = { added: [], removed: [], changed: [], unchanged: [] };
    const wanted = new Map(definitions.map((d) => [d.name, d]));
    const stops: Promise<void>[] = [];
    for (const [name, entry] of this.handles) {
      if (!wanted.has(name)) {
        this.handles.delete(name);
        result.removed.push(name);
        stops.push(entry.handle.dispose());
      }
    }
    const starts: ServerHandle[] = [];
    for (const def of definitions) {
      const hash = definitionHash(def);
      const existing = this.handles.get(def.name);
      if (existing && existing.hash === hash) {
        result.unchanged.push(def.name);
        existing.handle.adopt(def);
        continue;
      }
      if (existing) {
        result.changed.push(def.name);
        stops.push(existing.handle.dispose());
      } else {
        result.added.push(def.name);
      }
      const handle = this.createHandle(def);
      this.handles.set(def.name, { handle, hash });
      if (this.mayAutostart(def)) starts.push(handle);
    }
    if (result.added.length || result.removed.length || result.changed.length) this.changeEmitter.fire();
    await Promise.all(stops);
    // A failed start is the handle's error state, not the reconcile's.
    for (const handle of starts) handle.start().catch(() => undefined);
    return result;
  }

  /** Stops every server; used on deactivation. */
  async dispose(): Promise<void> {
    const all = this.all;
    this.handles.clear();
    await Promise.all(all.map((h) => h.dispose()));
  }
}
