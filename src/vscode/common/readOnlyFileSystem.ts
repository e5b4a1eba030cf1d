import * as vscode from 'vscode';

/** What every read-only provider of ours shares: flat (no folders) and refusing every write. */
export abstract class ReadOnlyFileSystem implements vscode.FileSystemProvider {
  protected readonly changeEmitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changeEmitter.event;

  /** `message` is what a refused write says, e.g. "MCP resources are read-only". */
  constructor(private readonly message: string) {}

  abstract readFile(uri: vscode.Uri): Uint8Array | Thenable<Uint8Array>;
  abstract stat(uri: vscode.Uri): vscode.FileStat | Thenable<vscode.FileStat>;

  watch(_uri: vscode.Uri): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }
  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions(this.message);
  }
  writeFile(): void {
    throw vscode.FileSystemError.NoPermissions(this.message);
  }
  delete(): void {
    throw vscode.FileSystemError.NoPermissions(this.message);
  }
  rename(): void {
    throw vscode.FileSystemError.NoPermissions(this.message);
  }
}
