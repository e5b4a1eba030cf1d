import * as vscode from 'vscode';
import { fromTemplate, isMediaFileName, joinShown, McpError, neutraliseLinks, type ServerHandle, type ShownText } from '../../core';
import { notify } from '../window/notifications';
import type { McpHost } from '../host/host';
import { ReadOnlyFileSystem } from '../common/readOnlyFileSystem';
import { fromResourceUri, RESOURCE_SCHEME } from './uri';
import { keepForOpen, takeKept } from './readAhead';
import { maskedForPerson } from '../policy/audit';

/**
 * Read-only documents backed by `resources/read`. Open documents are subscribed to when the
 * server allows it, so `notifications/resources/updated` refreshes them.
 */
export class ResourceFileSystem extends ReadOnlyFileSystem implements vscode.Disposable {
  /** What reading each document gave: its size as served, when it was read and when the server last said it changed. */
  private readonly reads = new Map<string, { size: number; readAt: number; updatedAt?: number }>();
  /** Open documents (with how many holders) by server and resource URI, and the subscription they hold. */
  private readonly watched = new Map<string, Watched>();
  private readonly openDocuments = new Map<string, vscode.Disposable>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly host: McpHost) {
    super(vscode.l10n.t('MCP resources are read-only'));
    this.subscriptions.push(
      host.onResourceUpdated(({ server, uri }) => {
        const docs = this.watched.get(key(server, uri))?.docs;
        if (!docs) return;
        const now = Date.now();
        for (const doc of docs.keys()) {
          const known = this.reads.get(doc);
          if (known) known.updatedAt = now;
          // A read kept for an open that never read it (the document was open already) is older than this update.
          takeKept(doc);
          this.changeEmitter.fire([{ type: vscode.FileChangeType.Changed, uri: vscode.Uri.parse(doc) }]);
        }
      }),
      // A changed definition brings a new handle: the subscription moves to it.
      host.onDidChange(() => {
        for (const entry of this.watched.values()) this.follow(entry);
      }),
      vscode.workspace.onDidOpenTextDocument((doc) => {
        if (doc.uri.scheme !== RESOURCE_SCHEME || this.openDocuments.has(doc.uri.toString())) return;
        this.openDocuments.set(doc.uri.toString(), this.track(doc.uri));
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        this.openDocuments.get(doc.uri.toString())?.dispose();
        this.openDocuments.delete(doc.uri.toString());
      }),
    );
  }

  static register(host: McpHost): vscode.Disposable {
    const fs = new ResourceFileSystem(host);
    return vscode.Disposable.from(
      fs,
      vscode.workspace.registerFileSystemProvider(RESOURCE_SCHEME, fs, { isCaseSensitive: true, isReadonly: true }),
    );
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const { server, resourceUri, fileName } = fromResourceUri(uri);
    const readJustBefore = takeKept(uri.toString());
    if (readJustBefore) return readJustBefore;
    const client = this.host.registry.get(server)?.client;
    if (!client) {
      const message = fromTemplate(
        vscode.l10n.t('MCP server "{0}" is not running, so {1} cannot be read'),
        this.host.shown(server),
        this.host.shown(resourceUri),
      );
      this.reportFailure(server, message);
      throw vscode.FileSystemError.Unavailable(message);
    }
    const handle = this.host.registry.get(server)!;
    let bytes: Buffer;
    try {
      const gated = await this.host.gate.serverFor(handle, 'person').readResource(resourceUri);
      if (!gated.sent) throw vscode.FileSystemError.NoPermissions(this.host.shown(gated.reason));
      const result = gated.result;
      const content = result.contents.find((c) => c.uri === resourceUri) ?? result.contents[0];
      if (!content) throw new Error(vscode.l10n.t('the server returned no contents'));
      bytes = 'blob' in content ? Buffer.from(content.blob, 'base64') : Buffer.from(content.text ?? '', 'utf8');
      if (!isMediaFileName(fileName)) bytes = asInertText(bytes);
    } catch (error) {
      if (error instanceof vscode.FileSystemError) throw error;
      const e = McpError.from(error);
      if (client.isResourceNotFound(e, resourceUri)) {
        const message = fromTemplate(
          vscode.l10n.t('"{0}" has no resource {1}: {2}'),
          this.host.shown(server),
          this.host.shown(resourceUri),
          this.host.shown(e.message),
        );
        this.reportFailure(server, message);
        throw vscode.FileSystemError.FileNotFound(message);
      }
      const message = fromTemplate(
        vscode.l10n.t('Reading {0} from "{1}" failed: {2}'),
        this.host.shown(resourceUri),
        this.host.shown(server),
        this.host.shown(e.message),
      );
      this.reportFailure(server, message);
      throw vscode.FileSystemError.Unavailable(message);
    }
    const known = this.reads.get(uri.toString());
    this.reads.set(uri.toString(), { size: bytes.length, readAt: known?.readAt ?? Date.now(), updatedAt: known?.updatedAt });
    keepForOpen(uri.toString(), bytes);
    return bytes;
  }

  /**
   * The editor only says "could not be opened due to an unexpected error": the server's reason goes
   * to its log and to a notification (once, when the editor asks twice for the same document).
   */
  private reportFailure(server: string, message: ShownText): void {
    this.host.logs.channel(server).error(message);
    const now = Date.now();
    for (const [m, at] of this.reported) if (now - at > 5000) this.reported.delete(m);
    if (this.reported.has(message)) return;
    this.reported.set(message, now);
    const showLog = vscode.l10n.t('Show Server Log');
    void notify('error', joinShown([fromTemplate(vscode.l10n.t('MCP Host')), message], ': '), showLog).then((pick) => {
      if (pick === showLog) this.host.logs.channel(server).show(true);
    });
  }
  private readonly reported = new Map<string, number>();

  /**
   * Size and time as the server lists them (`size`, `annotations.lastModified`) until the document
   * is read; then the size served. An update notification moves the time to when it came.
   */
  stat(uri: vscode.Uri): vscode.FileStat {
    const { server, resourceUri } = fromResourceUri(uri);
    const known = this.reads.get(uri.toString());
    const listed = this.host.registry.get(server)?.resources.find((r) => r.uri === resourceUri);
    const lastModified = timeOf(listed?.annotations?.lastModified);
    const mtime = Math.max(known?.updatedAt ?? 0, lastModified ?? 0) || known?.readAt || Date.now();
    const size = known?.size ?? (typeof listed?.size === 'number' && listed.size >= 0 ? listed.size : 0);
    return { type: vscode.FileType.File, ctime: 0, mtime, size, permissions: vscode.FilePermission.Readonly };
  }

  override watch(uri: vscode.Uri): vscode.Disposable {
    return this.track(uri);
  }

  /**
   * Subscribes while a document of `uri` is open (the first opener subscribes, the last closer
   * unsubscribes). Text documents are tracked through open/close events, since the workbench does
   * not always call `watch` for an extension file system's open editors.
   */
  private track(uri: vscode.Uri): vscode.Disposable {
    let parsed: { server: string; resourceUri: string };
    try {
      parsed = fromResourceUri(uri);
    } catch {
      return new vscode.Disposable(() => undefined);
    }
    const k = key(parsed.server, parsed.resourceUri);
    const entry: Watched = this.watched.get(k) ?? { ...parsed, docs: new Map<string, number>() };
    entry.docs.set(uri.toString(), (entry.docs.get(uri.toString()) ?? 0) + 1);
    this.watched.set(k, entry);
    // The handle subscribes now or when the server runs, and again after restarts and session renewals.
    this.follow(entry);
    let released = false;
    return new vscode.Disposable(() => {
      if (released) return;
      released = true;
      const n = (entry.docs.get(uri.toString()) ?? 1) - 1;
      if (n > 0) entry.docs.set(uri.toString(), n);
      else entry.docs.delete(uri.toString());
      if (entry.docs.size > 0) return;
      this.watched.delete(k);
      entry.subscription?.dispose();
    });
  }

  /** Holds the subscription of an open resource on the server's current handle. */
  private follow(entry: Watched): void {
    const handle = this.host.registry.get(entry.server);
    if (handle === entry.handle) return;
    entry.subscription?.dispose();
    entry.subscription = undefined;
    entry.handle = handle;
    if (handle) void this.subscribe(entry, handle);
  }

  /**
   * Subscribes through the gate, without asking again (the read before it asked): a `file:` URI
   * outside the roots is not watched. What the gate allows is the handle's subscription, which
   * sends `resources/subscribe` now or once the server runs, and again after restarts, each time
   * through this gate again. A failure is the server log's.
   */
  private async subscribe(entry: Watched, handle: ServerHandle): Promise<void> {
    let gated;
    try {
      gated = await this.host.gate.serverFor(handle, 'person').subscribe(entry.resourceUri);
    } catch (error) {
      return handle.log('warning', `subscribe ${entry.resourceUri}: ${McpError.from(error).message}`);
    }
    if (!gated.sent) return;
    // The document closed, or the server changed, while the gate decided.
    if (entry.handle !== handle || this.watched.get(key(entry.server, entry.resourceUri)) !== entry) return gated.result.dispose();
    entry.subscription = gated.result;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.changeEmitter.dispose();
  }
}

interface Watched {
  server: string;
  resourceUri: string;
  docs: Map<string, number>;
  handle?: ServerHandle;
  subscription?: { dispose(): void };
}

/**
 * A resource shown in a text editor is server text: its URI schemes are broken (see
 * `neutraliseLinks`) so that neither the Markdown link provider nor the editor's own link
 * detection turns `command:` or `file:` into a link. Relative links stay, and open the resource
 * they name. Bytes that are not UTF-8 are left as they are (the editor shows them as binary).
 * Secrets are masked when the person asked for it (`mcpHost.masking.inResults`).
 */
function asInertText(bytes: Buffer): Buffer {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return bytes;
  }
  return Buffer.from(maskedForPerson(neutraliseLinks(text)), 'utf8');
}

/** Milliseconds of an ISO 8601 time, or undefined when the server sent none or nonsense. */
function timeOf(iso: string | undefined): number | undefined {
  if (typeof iso !== 'string') return undefined;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : undefined;
}

function key(server: string, uri: string): string {
  return `${server}\u0000${uri}`;
}
