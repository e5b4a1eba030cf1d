/**
 * The agents Connect an Agent knows, the configuration file each reads at each scope, and the entry
 * MCP Host writes there: one entry per file, named `mcp-host`, that runs MCP Host's launcher
 * (./rendezvous.ts) with the file's id, so the agent's calls reach this window's gateway, and every
 * server the person gave it comes through that one process. A file several agents read (`.mcp.json`:
 * Claude Code, VS Code's agent host, Copilot CLI in a trusted folder) is one target: its agents share
 * the entry and the servers given to it, and each session is told apart by the client's own name
 * (its `initialize`), which the questions in the editor and the audit use.
 */
import * as path from 'node:path';

export type AgentScope = 'project' | 'user';

/** A configuration file an entry is written to. */
export interface AgentTarget {
  /** The launcher's argument, and the key of the servers given to it: `mcp-json`, `claude-user`, … */
  id: string;
  scope: AgentScope;
  /** The agents that read it, by their ids in `AGENTS`. */
  agents: readonly AgentId[];
  format: 'json' | 'toml';
  /** The entry's shape: Copilot CLI's `local` with its tools list, everyone else's `stdio`. */
  entry: 'stdio' | 'copilot' | 'plain';
}

export type AgentId = 'claude-code' | 'vscode-agent-host' | 'copilot-cli' | 'codex' | 'gemini-cli';

/** The agents, with the names their clients give in `initialize` (how a session is told apart). */
export const AGENTS: ReadonlyArray<{ id: AgentId; label: string; clientNames: readonly string[] }> = [
  { id: 'claude-code', label: 'Claude Code', clientNames: ['claude-code'] },
  {
    id: 'vscode-agent-host',
    label: "VS Code's agent host",
    // VS Code's own client names, and the one its agent host gives the Copilot sessions it runs (1.139.1).
    clientNames: ['Visual Studio Code', 'Visual Studio Code - Insiders', 'Code - OSS', 'vscode-agent-host'],
  },
  { id: 'copilot-cli', label: 'Copilot CLI', clientNames: ['copilot-cli'] },
  { id: 'codex', label: 'Codex', clientNames: ['codex-mcp-client'] },
  { id: 'gemini-cli', label: 'Gemini CLI', clientNames: ['gemini-cli-mcp-client', 'mcp-test-client'] },
];

export const TARGETS: readonly AgentTarget[] = [
  { id: 'mcp-json', scope: 'project', agents: ['claude-code', 'vscode-agent-host', 'copilot-cli'], format: 'json', entry: 'stdio' },
  { id: 'claude-user', scope: 'user', agents: ['claude-code'], format: 'json', entry: 'stdio' },
  { id: 'copilot-user', scope: 'user', agents: ['copilot-cli'], format: 'json', entry: 'copilot' },
  { id: 'codex-project', scope: 'project', agents: ['codex'], format: 'toml', entry: 'plain' },
  { id: 'codex-user', scope: 'user', agents: ['codex'], format: 'toml', entry: 'plain' },
  { id: 'gemini-project', scope: 'project', agents: ['gemini-cli'], format: 'json', entry: 'plain' },
  { id: 'gemini-user', scope: 'user', agents: ['gemini-cli'], format: 'json', entry: 'plain' },
];

/** The name of the entry MCP Host writes in every file. */
export const ENTRY_NAME = 'mcp-host';

/** The targets an agent can be connected through, project scope first. */
export function targetsOf(agent: AgentId): AgentTarget[] {
  return TARGETS.filter((t) => t.agents.includes(agent));
}

export function targetById(id: string): AgentTarget | undefined {
  return TARGETS.find((t) => t.id === id);
}

/** Where a target's file is: a project's under its folder, a user's under the home (or where the agent's variable moves it). */
export function targetFile(
  target: AgentTarget,
  where: { folder?: string; home: string; env: Record<string, string | undefined> },
): string | undefined {
  const { home, env } = where;
  switch (target.id) {
    case 'mcp-json':
      return where.folder && path.join(where.folder, '.mcp.json');
    case 'claude-user':
      return path.join(env.CLAUDE_CONFIG_DIR || home, '.claude.json');
    case 'copilot-user':
      return path.join(env.COPILOT_HOME || path.join(home, '.copilot'), 'mcp-config.json');
    case 'codex-project':
      return where.folder && path.join(where.folder, '.codex', 'config.toml');
    case 'codex-user':
      return path.join(env.CODEX_HOME || path.join(home, '.codex'), 'config.toml');
    case 'gemini-project':
      return where.folder && path.join(where.folder, '.gemini', 'settings.json');
    case 'gemini-user':
      return path.join(home, '.gemini', 'settings.json');
    default:
      return undefined;
  }
}

/** The entry's value: the launcher, with the target's id; no secret, no window's address. */
export function entryValue(target: AgentTarget, launcher: string): Record<string, unknown> {
  const args = [target.id];
  switch (target.entry) {
    case 'stdio':
      return { type: 'stdio', command: launcher, args };
    case 'copilot':
      return { type: 'local', command: launcher, args, tools: ['*'] };
    case 'plain':
      return { command: launcher, args };
  }
}

/** How a session's client is shown and remembered: a known agent's label and id, else its own name. */
export function agentOfClient(clientName: string | undefined, target: AgentTarget | undefined): { id: string; label: string } {
  const known = clientName === undefined ? undefined : AGENTS.find((a) => a.clientNames.includes(clientName));
  if (known) return { id: known.id, label: known.label };
  if (clientName) return { id: `client:${clientName}`, label: clientName };
  const first = target && AGENTS.find((a) => a.id === target.agents[0]);
  return first ? { id: first.id, label: first.label } : { id: 'unknown', label: 'an agent' };
}

/** How a target is named to the person: the agents that read its file. */
export function targetLabel(target: AgentTarget): string {
  return target.agents.map((id) => AGENTS.find((a) => a.id === id)?.label ?? id).join(', ');
}
