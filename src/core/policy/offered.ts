/**
 * Which tools a server's definition offers at all, before anyone asks for one: its allow/deny
 * lists (names or globs) and, for the person, the tool's visibility. The gate (./gate.ts) refuses
 * what is not offered; the tree, the palette and the chat's tool list show only what is.
 */
import zeptomatch from 'zeptomatch';
import type { Tool } from '../protocol/types';
import { isToolForPerson } from '../apps/toolUi';
import type { ServerDefinition } from '../servers/definition';

/** Whether the tool is offered under the server's allow/deny lists (names or globs). */
export function isToolOffered(def: Pick<ServerDefinition, 'tools'>, toolName: string): boolean {
  const matches = (patterns: string[] | undefined) => patterns?.some((p) => zeptomatch(p, toolName));
  if (matches(def.tools.deny)) return false;
  if (def.tools.allow && def.tools.allow.length > 0) return !!matches(def.tools.allow);
  return true;
}

/** Whether the palette and the tree offer the tool: allowed by the server's policy and not app-only. */
export function isToolOfferedToPerson(def: Pick<ServerDefinition, 'tools'>, tool: Tool): boolean {
  return isToolOffered(def, tool.name) && isToolForPerson(tool);
}
