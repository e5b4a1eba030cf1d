import type * as vscode from 'vscode';
import type { McpHost } from '../host';
import { addServer } from './addServer';
import { editServerSettings, removeServer, type ServerEntry } from './editServers';
import { importServers, type ImportReport } from './importServers';
import { windowUi, type SetupUi } from './ui';

/** Add, Import, Remove Server and Edit Server Settings, with the questions they ask replaceable for tests. */
export class ServerSetup {
  ui: SetupUi = windowUi;

  constructor(
    private readonly host: McpHost,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  addServer(): Promise<string | undefined> {
    return addServer(this.host, this.ui);
  }

  importServers(): Promise<ImportReport | undefined> {
    return importServers(this.host, this.ui, this.log);
  }

  removeServer(entry: ServerEntry): Promise<boolean> {
    return removeServer(this.host, this.ui, entry);
  }

  editServerSettings(entry: ServerEntry): Promise<vscode.TextEditor | undefined> {
    return editServerSettings(entry);
  }
}
