/**
 * Tools of the same name on two shared servers. VS Code's chat names an MCP tool after its server
 * and itself (`mcp_<server>_<tool>`, a number added where two servers' names would meet), so two
 * shared servers' tools never take each other's name; but the model picks a tool by its name and
 * description, and a `search` on one server and a `search` on another are easily confused, or
 * one server's tool made to pass for the other's. The Servers view and the share notice name them.
 */
import type { ServerDefinition } from '../servers/definition';
import type { Tool } from '../protocol/types';
import { isToolOfferedToPerson } from '../policy/offered';

/** A shared server as far as naming goes: its name, its policy and its tools as listed. */
export interface NamedTools {
  name: string;
  definition: Pick<ServerDefinition, 'tools'>;
  tools: readonly Tool[];
}

/** The names of the tools the chat is offered of a server: those its policy offers a person. */
function offeredNames(server: NamedTools): Set<string> {
  return new Set(server.tools.filter((t) => isToolOfferedToPerson(server.definition as ServerDefinition, t)).map((t) => t.name));
}

/**
 * For each tool of `server` the chat is offered, the other servers of `shared` that offer the chat
 * a tool of the same name (by server name, sorted); tools no other server has are left out.
 */
export function sameNamedTools(server: NamedTools, shared: readonly NamedTools[]): Map<string, string[]> {
  const mine = offeredNames(server);
  const out = new Map<string, string[]>();
  for (const other of shared) {
    if (other.name === server.name) continue;
    for (const name of offeredNames(other)) if (mine.has(name)) out.set(name, [...(out.get(name) ?? []), other.name].sort());
  }
  return out;
}
