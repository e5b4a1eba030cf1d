/**
 * An organisation's policy that a person cannot loosen. In VS Code an administrator locks MCP
 * Host's protective settings through VS Code's policy mechanism for extension settings (the
 * `policy` of each setting in package.json: Group Policy on Windows, configuration profiles on
 * macOS, `/etc/vscode/policy.json` on Linux). MCP Host also reads a managed policy file of its own,
 * in the same format (policy name → value), so that the CLI, `serve`, and an editor whose VS Code
 * does not apply policies to this extension (the browser's, a remote server's, VS Code before it
 * reads them) are held to the same values. Editor-free: the editor reads VS Code's side
 * (src/vscode/common/organisation.ts).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { rulesOf, type ServerRule } from './orgPolicy';

/** MCP Host's settings an organisation can lock, and the policy name of each (package.json's `policy.name`). */
export const LOCKABLE_SETTINGS = {
  'mcpHost.sandbox.default': 'McpHostSandboxDefault',
  'mcpHost.roots.fence': 'McpHostRootsFence',
  'mcpHost.pins.acceptChanges': 'McpHostPinsAcceptChanges',
  'mcpHost.flowGuard': 'McpHostFlowGuard',
  'mcpHost.audit.file': 'McpHostAuditFile',
  'mcpHost.telemetry.endpoint': 'McpHostTelemetryEndpoint',
  'mcpHost.telemetry.protocol': 'McpHostTelemetryProtocol',
  'mcpHost.telemetry.exportContent': 'McpHostTelemetryExportContent',
  'mcpHost.organisation.vscodeMcpPolicy': 'McpHostVscodeMcpPolicy',
} as const;

export type LockableSetting = keyof typeof LOCKABLE_SETTINGS;

/** VS Code's own policy names for its MCP settings, read from the same file by the CLI and `serve`. */
export const VSCODE_MCP_POLICIES = {
  access: 'ChatMCP',
  allowedServers: 'ChatAllowedMcpServers',
  deniedServers: 'ChatDeniedMcpServers',
  allowManagedServersOnly: 'ChatAllowManagedMcpServersOnly',
} as const;

/**
 * Where the managed policy file is: VS Code's own on Linux (one file for both), and a file of
 * MCP Host's where VS Code reads its policies from the system (macOS, Windows). Only an
 * administrator can write there; there is no variable to move it, since a person could then point
 * it at a file of their own.
 */
export function managedPolicyFile(platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): string {
  if (platform === 'win32') return path.win32.join(env.ProgramData ?? 'C:\\ProgramData', 'MCP Host', 'policy.json');
  if (platform === 'darwin') return '/Library/Application Support/MCP Host/policy.json';
  return '/etc/vscode/policy.json';
}

/** The managed file's values by policy name; what was wrong with it (it is then read as empty: an unreadable file locks nothing). */
export interface ManagedPolicy {
  values: Readonly<Record<string, unknown>>;
  file: string;
  problem?: string;
}

/** Reads the managed file; a file that is not there is an empty policy, one that is not a JSON object is named. */
export function readManagedPolicy(file: string = managedPolicyFile()): ManagedPolicy {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR'
      ? { values: {}, file }
      : { values: {}, file, problem: `${file} cannot be read (${code})` };
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return { values: parsed as Record<string, unknown>, file };
  } catch {
    // Named below.
  }
  return { values: {}, file, problem: `${file} is not a JSON object of policy names and values` };
}

/** The managed value of one of MCP Host's settings, when the file sets one. */
export function managedSetting(policy: ManagedPolicy, setting: LockableSetting): unknown {
  return policy.values[LOCKABLE_SETTINGS[setting]];
}

/** A list policy's value: VS Code's file carries JSON text for it; an array is taken as it is. */
export function listOf(value: unknown): ServerRule[] | undefined {
  if (typeof value === 'string') {
    try {
      return rulesOf(JSON.parse(value));
    } catch {
      return [];
    }
  }
  return rulesOf(value);
}

/** VS Code's MCP controls as the managed file gives them, for the CLI and `serve`. */
export interface VscodeMcpPolicy {
  /** `chat.mcp.access`: false when it is `none` or `registry` (MCP Host's servers are in no registry). */
  access: boolean;
  allowed?: ServerRule[];
  denied?: ServerRule[];
}

/** What the managed file says of VS Code's MCP controls; undefined when the organisation keeps them to shared servers. */
export function vscodeMcpPolicyOf(policy: ManagedPolicy): VscodeMcpPolicy | undefined {
  if (managedSetting(policy, 'mcpHost.organisation.vscodeMcpPolicy') === 'sharedServers') return undefined;
  const v = policy.values;
  const access = v[VSCODE_MCP_POLICIES.access];
  const managedOnly = v[VSCODE_MCP_POLICIES.allowManagedServersOnly] === true;
  const allowed = listOf(v[VSCODE_MCP_POLICIES.allowedServers]);
  return {
    access: access === undefined || access === true || access === 'all',
    // Only the managed list counts where the organisation says so: without one, no server is allowed.
    allowed: managedOnly ? (allowed ?? []) : allowed,
    denied: listOf(v[VSCODE_MCP_POLICIES.deniedServers]),
  };
}
