/**
 * What VS Code's own settings for MCP in the chat (its organisation policies) let the chat have of
 * MCP Host's shared servers: `chat.mcp.access`, and the allow and deny lists applied to the server
 * behind the gateway (../../core/gateway/orgPolicy.ts). A leaf: chat sharing and the Servers view
 * both read it.
 */
import type { ServerHandle } from '../../core';
import { vscodeWithholds, type WithheldBy } from '../policy/vscodeMcpPolicy';
import { sameNamedTools } from '../../core/gateway/sameNames';

/** The settings of VS Code's that decide whether the chat may have MCP servers at all, or which. */
export const CHAT_POLICY_SETTINGS = [
  'chat.mcp.access',
  'chat.mcp.allowedServers',
  'chat.mcp.deniedServers',
  'chat.mcp.allowManagedServersOnly',
  'mcpHost.organisation.vscodeMcpPolicy',
];

/** Which of VS Code's settings keeps this server from the chat, if one does. */
export function chatWithheldBy(server: ServerHandle): WithheldBy | undefined {
  return vscodeWithholds(server.definition);
}

/** The servers VS Code's chat is offered now: shared, enabled, and let through by VS Code's organisation policies. */
export function offeredToChat(servers: readonly ServerHandle[]): ServerHandle[] {
  return servers.filter((s) => s.definition.shareWithChat && s.definition.enabled && !chatWithheldBy(s));
}

/**
 * For each tool of `server` the chat is offered, the other servers offered to the chat that have a
 * tool of the same name (../../core/gateway/sameNames.ts); empty when `server` is not offered itself.
 */
export function sameNamesInChat(server: ServerHandle, servers: readonly ServerHandle[]): Map<string, string[]> {
  const offered = offeredToChat(servers);
  return offered.includes(server) ? sameNamedTools(server, offered) : new Map();
}
