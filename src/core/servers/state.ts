import type { Disposable } from 'vscode-jsonrpc/node';
import type { McpClient } from '../client/client';
import type { Transport } from '../transport/transport';

/**
 * One start of a server: its transport, the client speaking over it, and everything that listens
 * to them. `dispose()` ends all of it at once: listeners first, so nothing of this launch reaches
 * the server's handle any more, then the client, which closes the transport.
 */
export class Launch {
  private subscriptions: Disposable[] = [];
  private ending: Promise<void> | undefined;

  constructor(
    readonly transport: Transport,
    readonly client: McpClient,
  ) {}

  /** The process id of a stdio server. */
  get pid(): number | undefined {
    return (this.transport as { pid?: number }).pid;
  }

  /** The folder a stdio server runs in; undefined for HTTP. */
  get workingFolder(): string | undefined {
    return (this.transport as { workingFolder?: string }).workingFolder;
  }

  /** The environment a stdio server runs with; undefined for HTTP. */
  get environment(): Readonly<NodeJS.ProcessEnv> | undefined {
    return (this.transport as { environment?: NodeJS.ProcessEnv }).environment;
  }

  get isDisposed(): boolean {
    return this.ending !== undefined;
  }

  /** Ties listeners to this launch; once it is disposed they are disposed at once. */
  hold(...subscriptions: Array<Disposable | undefined>): void {
    for (const subscription of subscriptions) {
      if (!subscription) continue;
      if (this.ending) subscription.dispose();
      else this.subscriptions.push(subscription);
    }
  }

  dispose(): Promise<void> {
    this.ending ??= (async () => {
      for (const subscription of this.subscriptions.splice(0)) subscription.dispose();
      await this.client.close();
    })();
    return this.ending;
  }

  /** States are logged and shown in messages; a launch says only what identifies it. */
  toJSON(): { pid?: number } {
    return this.pid === undefined ? {} : { pid: this.pid };
  }
}

/** A server's lifecycle, one case at a time; a running server carries its launch. */
export type ServerState =
  | { kind: 'stopped' }
  | { kind: 'starting' }
  | { kind: 'running'; launch: Launch }
  | { kind: 'error'; message: string; /** When an automatic restart is due (ms since epoch). */ restartAt?: number };

export { assertNever } from '../protocol/assertNever';
