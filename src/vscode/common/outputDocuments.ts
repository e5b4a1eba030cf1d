import * as vscode from 'vscode';
import { ReadOnlyFileSystem } from './readOnlyFileSystem';

export const OUTPUT_SCHEME = 'mcp-output';

/**
 * Read-only in-memory documents for tool results, rendered prompts and request reviews: they open
 * like files (images in the image preview) and never touch the disk.
 */
export class OutputDocuments extends ReadOnlyFileSystem implements vscode.Disposable {
  private readonly files = new Map<string, { data: Uint8Array; mtime: number }>();
  private counter = 0;
  private static readonly MAX_FILES = 200;

  constructor() {
    super(vscode.l10n.t('MCP Host documents are read-only'));
  }

  static register(): { docs: OutputDocuments; disposable: vscode.Disposable } {
    const docs = new OutputDocuments();
    return {
      docs,
      disposable: vscode.Disposable.from(
        docs,
        vscode.workspace.registerFileSystemProvider(OUTPUT_SCHEME, docs, { isReadonly: true, isCaseSensitive: true }),
      ),
    };
  }

  /**
   * Stores a document, and the files it links relatively (its attachments) in the same folder;
   * returns the document's URI. Old documents are dropped past a bound.
   */
  put(
    folder: string,
    fileName: string,
    data: Uint8Array | string,
    attachments: ReadonlyArray<{ fileName: string; data: Uint8Array }> = [],
  ): vscode.Uri {
    const dir = `/${folder}/${++this.counter}`;
    const store = (name: string, bytes: Uint8Array | string) => {
      const path = `${dir}/${name.replace(/[/\\?#%*:|"<>]/g, '_')}`;
      this.files.set(path, { data: typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes, mtime: Date.now() });
      return path;
    };
    for (const a of attachments) store(a.fileName, a.data);
    const uri = vscode.Uri.from({ scheme: OUTPUT_SCHEME, path: store(fileName, data) });
    while (this.files.size > OutputDocuments.MAX_FILES) this.files.delete(this.files.keys().next().value as string);
    return uri;
  }

  text(uri: vscode.Uri): string | undefined {
    const f = this.files.get(uri.path);
    return f ? Buffer.from(f.data).toString('utf8') : undefined;
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const f = this.files.get(uri.path) ?? this.gone(uri);
    if (!f) throw vscode.FileSystemError.FileNotFound(uri);
    return f.data;
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const f = this.files.get(uri.path) ?? this.gone(uri);
    if (!f) throw vscode.FileSystemError.FileNotFound(uri);
    return { type: vscode.FileType.File, ctime: f.mtime, mtime: f.mtime, size: f.data.length, permissions: vscode.FilePermission.Readonly };
  }

  /**
   * A document this window no longer holds (a tab restored after a reload, or one dropped past the
   * bound) reads as a note saying so, instead of VS Code's "file not found".
   */
  private gone(uri: vscode.Uri): { data: Uint8Array; mtime: number } | undefined {
    if (!uri.path.endsWith('.md')) return undefined;
    const kind = uri.path.split('/')[1];
    const text =
      kind === 'results'
        ? vscode.l10n.t(
            'This tool result is gone: results are kept in memory while the window is open, and this one was from before a reload (or is among the oldest). Call the tool again with "MCP Host: Call Tool...".',
          )
        : kind === 'prompts'
          ? vscode.l10n.t(
              'This prompt is gone: rendered prompts are kept in memory while the window is open, and this one was from before a reload. Get the prompt again with "MCP Host: Get Prompt...".',
            )
          : vscode.l10n.t(
              'This document is gone: MCP Host keeps such documents in memory while the window is open, and this one was from before a reload.',
            );
    return { data: Buffer.from(`# ${uri.path.split('/').pop()}\n\n${text}\n`, 'utf8'), mtime: 0 };
  }

  dispose(): void {
    this.files.clear();
    this.changeEmitter.dispose();
  }
}
