import * as vscode from 'vscode';
import {
  mergeDefinitions,
  parseServerDefinitions,
  sandboxAvailability,
  sandboxedOnlyByDefault,
  withSandboxDefault,
  type SandboxAvailability,
  type SandboxDefault,
  type DefinitionDiagnostic,
  type InputDefinition,
  type ServerDefinition,
  type ServerOrigin,
} from '../../core';
import { jsonc } from '../../core/jsonc';
import { Settings } from './ids';
import { cachedSetting } from './settingCache';
import { lockedSetting, oneOf } from './organisation';

const SANDBOX_DEFAULTS: readonly SandboxDefault[] = ['off', 'workspace', 'all'];

export interface ConfiguredServers {
  definitions: ServerDefinition[];
  diagnostics: DefinitionDiagnostic[];
  /**
   * On a machine with no sandbox, the servers only `mcpHost.sandbox.default` would sandbox (their
   * entries do not set `sandboxEnabled`), and why there is none: the person is asked once whether
   * they start unsandboxed.
   */
  withoutSandbox?: { servers: string[]; reason: string };
}

/**
 * Reads `mcpHost.servers` scope by scope (user, workspace, each folder), so each definition
 * knows where it came from; a more specific scope replaces a same-named server.
 */
export function readConfiguredServers(unsandboxedByChoice = false, machine: () => SandboxAvailability = machineSandbox): ConfiguredServers {
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
      const value = vscode.workspace
        .getConfiguration(Settings.section, folder.uri)
        .inspect<unknown>(Settings.servers)?.workspaceFolderValue;
      add(value, { scope: 'folder', folderUri: folder.uri.toString() });
    }
  }
  const merged = mergeDefinitions(layers);
  const sandbox = sandboxDefault();
  const availability = sandbox === 'off' ? undefined : machine();
  if (availability?.ok !== false) return { definitions: merged.map((d) => withSandboxDefault(d, sandbox)), diagnostics };
  const servers = sandboxedOnlyByDefault(merged, sandbox).map((d) => d.name);
  // The person chose to start them unsandboxed: the default stands down; an entry that asks for a sandbox still does not start.
  const effective = unsandboxedByChoice ? 'off' : sandbox;
  return {
    definitions: merged.map((d) => withSandboxDefault(d, effective)),
    diagnostics,
    ...(servers.length ? { withoutSandbox: { servers, reason: availability.reason } } : {}),
  };
}

let probed: SandboxAvailability | undefined;
/** Whether this machine has a sandbox, probed once per window. */
export function machineSandbox(): SandboxAvailability {
  return (probed ??= sandboxAvailability());
}
/**
 * `mcpHost.sandbox.default` as the organisation locks it (./organisation.ts), else from user
 * settings only (a workspace cannot turn it off); unset, it is
 * `workspace` where this machine has a sandbox MCP Host's tests run (bubblewrap on Linux) and `off`
 * elsewhere: the macOS profile has not yet run on a Mac, so it is used only where it is asked for.
 */
export function sandboxDefault(): SandboxDefault {
  const set = lockedSetting('mcpHost.sandbox.default', oneOf(SANDBOX_DEFAULTS)).value;
  if (set) return set;
  const machine = machineSandbox();
  return machine.ok && machine.kind === 'bubblewrap' ? 'workspace' : 'off';
}

/** Read on every message a server sends or is sent: cached until the setting changes. */
export const traceLevel = cachedSetting(`${Settings.section}.${Settings.trace}`, (): 'off' | 'messages' | 'verbose' => {
  const v = vscode.workspace.getConfiguration(Settings.section).get<string>(Settings.trace, 'off');
  return v === 'messages' || v === 'verbose' ? v : 'off';
});

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

/**
 * How to ask for `${input:ID}` on behalf of `def`: from the definition's own scope, else a less
 * specific one (folder, then workspace, then user). A user server reads only the user value, so
 * a workspace's `mcpHost.inputs` cannot reword, unmask or prefill the prompt of a server it did
 * not define.
 */
export function inputDefinitionFor(def: ServerDefinition, id: string): InputDefinition | undefined {
  const folder = def.origin.folderUri ? vscode.Uri.parse(def.origin.folderUri) : undefined;
  const i = vscode.workspace.getConfiguration(Settings.section, folder).inspect<Record<string, InputDefinition>>(Settings.inputs);
  const layers =
    def.origin.scope === 'folder'
      ? [i?.workspaceFolderValue, i?.workspaceValue, i?.globalValue]
      : def.origin.scope === 'workspace'
        ? [i?.workspaceValue, i?.globalValue]
        : [i?.globalValue];
  for (const layer of layers) {
    const entry = layer && typeof layer === 'object' ? layer[id] : undefined;
    if (entry && typeof entry === 'object') return entry;
  }
  return undefined;
}

/** A workspace or folder server that Workspace Trust keeps from starting. */
export interface BlockedServer {
  name: string;
  origin: ServerOrigin;
}

/**
 * The servers the workspace's own settings files define. In Restricted Mode VS Code hides
 * restricted settings (`mcpHost.servers`) from `inspect()`, so the view could not say which
 * servers are blocked; the files are read for their names only, never to run anything.
 */
export async function serverNamesInWorkspaceFiles(): Promise<BlockedServer[]> {
  const found: BlockedServer[] = [];
  const namesIn = async (uri: vscode.Uri, settingsOf: (doc: unknown) => unknown): Promise<string[]> => {
    try {
      const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
      const settings = settingsOf(jsonc().parse(text, [], { allowTrailingComma: true })) as
        Record<string, Record<string, unknown> | undefined> | undefined;
      const servers = settings?.[`${Settings.section}.${Settings.servers}`] ?? settings?.[Settings.section]?.[Settings.servers];
      return servers && typeof servers === 'object' && !Array.isArray(servers) ? Object.keys(servers) : [];
    } catch {
      return [];
    }
  };
  const file = vscode.workspace.workspaceFile;
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (file && file.scheme !== 'untitled') {
    for (const name of await namesIn(file, (doc) => (doc as { settings?: unknown } | undefined)?.settings))
      found.push({ name, origin: { scope: 'workspace' } });
  }
  for (const folder of folders) {
    const origin: ServerOrigin = file ? { scope: 'folder', folderUri: folder.uri.toString() } : { scope: 'workspace' };
    for (const name of await namesIn(vscode.Uri.joinPath(folder.uri, '.vscode', 'settings.json'), (doc) => doc))
      found.push({ name, origin });
  }
  return found;
}
