import type * as vscode from 'vscode';
import { definitionProblem } from '../../core';
import type { McpHost } from '../host';
import { addServer } from './addServer';
import { editServerSettings, removeServer, type ServerEntry } from './editServers';
import type * as ImportModule from './importServers';
import type { ImportReport } from './importServers';
import type { HostUi } from '../ui';
import type { SetupUi } from './ui';

/** Add, Import, Remove Server and Edit Server Settings, asking through `HostUi.setup`. */
export class ServerSetup {
  constructor(
    private readonly host: McpHost,
    private readonly log: vscode.LogOutputChannel,
    private readonly hostUi: HostUi,
  ) {}

  /** Asked at each command, so a test that replaces `HostUi.setup` answers the next flow. */
  private get ui(): SetupUi {
    return this.hostUi.setup;
  }

  addServer(): Promise<string | undefined> {
    return addServer(this.host, this.ui);
  }

  importServers(): Promise<ImportReport | undefined> {
    return loadImport().importServers(this.host, this.ui, this.log, definitionProblem);
  }

  removeServer(entry: ServerEntry): Promise<boolean> {
    return removeServer(this.host, this.ui, entry);
  }

  editServerSettings(entry: ServerEntry): Promise<vscode.TextEditor | undefined> {
    return editServerSettings(entry);
  }
}

/** dist/import.js, built from ./importServers.ts beside dist/extension.js: the import flow loads when the command first runs. */
function loadImport(): typeof ImportModule {
  return require('./import.js') as typeof ImportModule;
}
