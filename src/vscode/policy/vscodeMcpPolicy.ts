/**
 * VS Code's own organisation controls for MCP (`chat.mcp.access`, the allow and deny lists,
 * `chat.mcp.allowManagedServersOnly`), applied by MCP Host to its servers: to what it shares with
 * the chat (../gateway/chatPolicy.ts), and to every server it starts unless the organisation keeps
 * them to shared servers (docs/teams.md). A leaf below the host.
 */
import { isDeepStrictEqual } from 'node:util';
import * as vscode from 'vscode';
import type { ServerDefinition } from '../../core';
import { listOf, VSCODE_MCP_POLICIES } from '../../core/gateway/managedPolicy';
import { identityOf, orgVerdict, rulesOf, type ServerRule } from '../../core/gateway/orgPolicy';
import { isString, lockedSetting, managedPolicy } from '../common/organisation';

/**
 * `chat.mcp.access`: `none` (or `false`) turns MCP off in the chat, `registry` allows only servers
 * from the configured registry, which ours are not.
 */
function chatMcpAccessAllows(): boolean {
  const allows = (access: unknown) => access === undefined || access === true || access === 'all';
  return (
    allows(vscode.workspace.getConfiguration('chat').get<unknown>('mcp.access')) &&
    allows(managedPolicy().values[VSCODE_MCP_POLICIES.access])
  );
}

/**
 * `chat.mcp.allowedServers` as VS Code's policies mean it: with `chat.mcp.allowManagedServersOnly`
 * only the organisation's list counts (VS Code's policy, else MCP Host's managed file), and without
 * one no server is allowed; otherwise the value VS Code gives extensions (the policy's, else the user's).
 */
function allowedRules(config: vscode.WorkspaceConfiguration): ServerRule[] | undefined {
  if (config.get('allowManagedServersOnly') !== true) return rulesOf(config.get('allowedServers'));
  const own = config.inspect('allowedServers')?.globalValue;
  const given = config.get('allowedServers');
  // A value that is not the person's own is the policy's.
  const policy = given !== undefined && given !== null && !isDeepStrictEqual(given, own) ? given : undefined;
  return rulesOf(policy ?? managedPolicy().values[VSCODE_MCP_POLICIES.allowedServers]) ?? [];
}

/** Which of VS Code's settings keeps this server out, if one does. */
export type WithheldBy = 'chat.mcp.access' | 'chat.mcp.deniedServers' | 'chat.mcp.allowedServers';

/**
 * The deny list: the value VS Code gives extensions (the policy's, else the user's), and the managed
 * file's `ChatDeniedMcpServers` beside it, since VS Code does not apply that file's policies to
 * extensions everywhere (the browser's VS Code, a remote server): a server either denies is denied.
 */
function deniedRules(config: vscode.WorkspaceConfiguration): ServerRule[] | undefined {
  const own = rulesOf(config.get('deniedServers'));
  const file = listOf(managedPolicy().values[VSCODE_MCP_POLICIES.deniedServers]);
  return own || file ? [...(own ?? []), ...(file ?? [])] : undefined;
}

/**
 * Which of VS Code's settings keeps `definition` from the chat (and, unless the organisation keeps
 * them to shared servers, from starting at all), if one does. The lists' value is the one VS Code
 * gives extensions (the policy's when one is set, else the user's), and the managed file's
 * `ChatMCP` and `ChatDeniedMcpServers` hold as well.
 */
export function vscodeWithholds(definition: ServerDefinition): WithheldBy | undefined {
  if (!chatMcpAccessAllows()) return 'chat.mcp.access';
  const config = vscode.workspace.getConfiguration('chat.mcp');
  const verdict = orgVerdict(identityOf(definition), allowedRules(config), deniedRules(config));
  if (verdict.allowed) return undefined;
  return verdict.why === 'denied' ? 'chat.mcp.deniedServers' : 'chat.mcp.allowedServers';
}

/**
 * Which of VS Code's settings keeps `definition` from starting: VS Code's MCP policies hold for
 * every server MCP Host starts unless the organisation (only it: a person's value does not count)
 * keeps them to shared servers.
 */
export function startWithheldBy(definition: ServerDefinition): WithheldBy | undefined {
  const scope = lockedSetting('mcpHost.organisation.vscodeMcpPolicy', isString);
  if (scope.lockedBy && scope.value === 'sharedServers') return undefined;
  return vscodeWithholds(definition);
}
