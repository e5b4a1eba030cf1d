import type * as vscode from 'vscode';
import type { ServerLog } from '../logs/logs';
import { definitionProblem } from '../../core';
import type { McpHost } from '../host/host';
import type { ServerEntry } from './editServers';
import type { ImportReport } from './importServers';
import type * as SetupModule from './lazy';
import type { HostUi } from '../ui/hostUi';
import type { SetupUi } from '../ui/setupUi';

/** Add, Import, Remove Server and Edit Server Settings, asking through `HostUi.setup`. */
export class ServerSetup {
  constructor(
    private readonly host: McpHost,
    private readonly log: ServerLog,
    private readonly hostUi: HostUi,
  ) {}

  /** Asked at each command, so a test that replaces `HostUi.setup` answers the next flow. */
  private get ui(): SetupUi {
    return this.hostUi.setup;
  }

  addServer(): Promise<string | undefined> {
    return loadSetup().addServer(this.host, this.ui);
  }

  importServers(): Promise<ImportReport | undefined> {
    return loadSetup().importServers(this.host, this.ui, this.log, definitionProblem);
  }

  removeServer(entry: ServerEntry): Promise<boolean> {
    return loadSetup().removeServer(this.host, this.ui, entry);
  }

  editServerSettings(entry: ServerEntry): Promise<vscode.TextEditor | undefined> {
    return loadSetup().editServerSettings(entry);
  }
}

/** dist/setup.js, built from ./lazy.ts beside dist/extension.js: the setup flows load when one of their commands first runs. */
function loadSetup(): typeof SetupModule {
  return require('./setup.js') as typeof SetupModule;
}
