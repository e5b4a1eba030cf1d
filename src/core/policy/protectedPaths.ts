/**
 * The fence's rule for the files that run later (src/core/servers/sandbox/protected.ts has the
 * names): a call of a tool that is not read-only whose arguments name one, inside a root, is asked
 * about (the CLI, which has nobody to ask, refuses it), whoever sent it. The server's own
 * `readOnlyHint` decides what is read-only here, trusted or not: the rule stops a server that does
 * what it says (a file system server, say, told by a model to rewrite `.vscode/tasks.json`); a
 * server that lies about its tools writes on its own, with or without a path in its arguments, and
 * only its sandbox stops that. `--fence off` and `mcpHost.roots.fence: off` turn the rule off with
 * the rest of the fence.
 */
import type { Tool } from '../protocol/types';
import { protectedNameIn } from '../servers/sandbox/protected';
import type { FencedPath } from './types';

/** A reading of an argument that the fence found inside a root, and its names below that root. */
export interface InsideReading {
  found: FencedPath;
  below: readonly string[];
}

/** The readings that name a protected path, one per argument, for a tool that may change things; none for a read-only one. */
export function protectedPathsNamed(tool: Tool, inside: readonly InsideReading[]): FencedPath[] {
  if (tool.annotations?.readOnlyHint === true) return [];
  const byPointer = new Map<string, FencedPath>();
  for (const { found, below } of inside)
    if (!byPointer.has(found.pointer) && protectedNameIn(below) !== undefined) byPointer.set(found.pointer, found);
  return [...byPointer.values()];
}

/** The refusal's words where nobody can be asked. */
export function describeProtected(findings: readonly FencedPath[]): string {
  return (
    `it names a file that runs later (git hooks or configuration, the editor's or an agent's settings, a shell file): ` +
    `${findings.map((f) => `${f.pointer || 'the URI'} = ${JSON.stringify(f.value)} (${f.resolved})`).join('; ')}; ` +
    'only a person may allow such a write (with --fence off the fence, this rule too, is off)'
  );
}
