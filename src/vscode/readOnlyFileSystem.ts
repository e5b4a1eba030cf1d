import * as vscode from 'vscode';

/** What every read-only provider of ours shares: flat (no folders) and refusing every write. */
export abstract class ReadOnlyFileSystem implements vscode.FileSystemProvider {
  protected readonly changeEmitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changeEmitter.event;

  constructor(private readonly what: string) {}

  abstract readFile(uri: vscode.Uri): Uint8Array | Thenable<Uint8Array>;
  abstract stat(uri: vscode.Uri): vscode.FileStat | Thenable<vscode.FileStat>;

  watch(_uri: vscode.Uri): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }
  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions(`${this.what} are read-only`);
  }
  writeFile(): void {
    throw vscode.FileSystemError.NoPermissions(`${this.what} are read-only`);
  }
  delete(): void {
    throw vscode.FileSystemError.NoPermissions(`${this.what} are read-only`);
  }
  rename(): void {
    throw vscode.FileSystemError.NoPermissions(`${this.what} are read-only`);
  }
}
