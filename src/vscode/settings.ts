import * as vscode from 'vscode';
import { mergeDefinitions, parseServerDefinitions, type DefinitionDiagnostic, type ServerDefinition } from '../core';
import { Settings } from './ids';

export interface ConfiguredServers {
  definitions: ServerDefinition[];
  diagnostics: DefinitionDiagnostic[];
}

/**
 * Reads `mcpHost.servers` scope by scope (user, workspace, each folder), so each definition
 * knows where it came from; a more specific scope replaces a same-named server.
 */
export function readConfiguredServers(): ConfiguredServers {
  const layers: ServerDefinition[][] = [];
  const diagnostics: DefinitionDiagnostic[] = [];
  const add = (raw: unknown, origin: ServerDefinition['origin']) => {
    const parsed = parseServerDefinitions(raw, origin);
    layers.push(parsed.definitions);
    diagnostics.push(...parsed.diagnostics);
  };
  const top = vscode.workspace.getConfiguration(Settings.section).inspect<unknown>(Settings.servers);
  add(top?.globalValue, { scope: 'user' });
  add(top?.workspaceValue, { scope: 'workspace' });
  // In a single-folder window the folder's settings are the workspace settings: read them once.
  if (vscode.workspace.workspaceFile) {
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      const value = vscode.workspace.getConfiguration(Settings.section, folder.uri).inspect<unknown>(Settings.servers)?.workspaceFolderValue;
      add(value, { scope: 'folder', folderUri: folder.uri.toString() });
    }
  }
  return { definitions: mergeDefinitions(layers), diagnostics };
}

export function traceLevel(): 'off' | 'messages' | 'verbose' {
  const v = vscode.workspace.getConfiguration(Settings.section).get<string>(Settings.trace, 'off');
  return v === 'messages' || v === 'verbose' ? v : 'off';
}

export function restartPolicySettings(): { maxRestarts: number; windowMs: number } {
  const c = vscode.workspace.getConfiguration(Settings.section);
  const max = c.get<number>(Settings.maxRestarts, 3);
  const windowSeconds = c.get<number>(Settings.restartWindowSeconds, 300);
  return { maxRestarts: Math.max(0, Math.floor(max)), windowMs: Math.max(1, windowSeconds) * 1000 };
}

/** The folder a definition's `${workspaceFolder}` and default cwd mean. */
export function folderFor(def: ServerDefinition): vscode.WorkspaceFolder | undefined {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (def.origin.folderUri) return folders.find((f) => f.uri.toString() === def.origin.folderUri) ?? folders[0];
  return folders[0];
}
