import * as os from 'node:os';
import * as path from 'node:path';
import { serverEnvironment, type StdioServerParams } from '../../transport/stdio';
import type { ServerDefinition } from '../definition';
import { withSandboxDefault, type SandboxDefault } from './defaults';
import { computeReach, isWithin, thisHost, type HostFacts } from './reach';
import type { SandboxReach, SandboxSettings } from './settings';

/**
 * The reach a server would get, computed without starting it (for the launch consent and the
 * tree's tooltip): the same computation `sandboxedParams` makes at launch, on the same facts.
 */
export function previewReach(
  params: Pick<StdioServerParams, 'command' | 'args' | 'cwd' | 'env' | 'baseEnv'>,
  roots: readonly string[],
  settings: SandboxSettings | undefined,
  host: HostFacts = thisHost(),
): SandboxReach {
  const env = serverEnvironment(params);
  return computeReach({ command: params.command, args: params.args ?? [], cwd: params.cwd ?? process.cwd(), env, roots, settings }, host)
    .reach;
}

/** A path named in a sandboxed server's error that the sandbox hid from it, and why. */
export interface HiddenPath {
  /** The absolute path as the host resolves it. */
  path: string;
  /** The folder a setting would have to add: the path itself, or the folder of a file. */
  folder: string;
  /** `outside`: no rule of the reach covers it; `denyRead`: the entry's `sandbox.filesystem.denyRead` hides it (the rule that does). */
  cause: { kind: 'outside' } | { kind: 'denyRead'; rule: string };
}

/** Where the host's files are hidden from a sandboxed server: its home (an empty one inside) and the temporary folders (a private one inside). */
function hidingAreas(reach: SandboxReach, host: HostFacts, tmp: string): string[] {
  return [reach.home, host.realpath('/tmp'), host.realpath(tmp)];
}

/** Absolute and `~/` paths in a text: in quotes, in brackets, after a space or a colon, up to a quote, a space, a bracket or a backslash (a JSON text's escapes). */
const PATH_IN_TEXT = /(?:^|[\s'"`([{=:,])((?:~|\/)[^\s'"`()[\]{}<>,;|*?\\]*)/g;
/** Trailing punctuation a sentence adds after a path. */
const TRAILING = /[.:!]+$/;
/** How many paths of one text are looked at: enough for a stack trace, never a scan of a whole document. */
const MAX_CANDIDATES = 64;

/**
 * The paths a sandboxed server's error text (a JSON-RPC error, an `isError` result, its stderr)
 * names that the sandbox hid from it: each must exist on the host and lie where the sandbox hides
 * files (the home, the temporary folders) outside every folder of the reach, or under a `denyRead`
 * rule. The text is the server's: a path it names inside its reach, or one that does not exist,
 * gives nothing, so a hostile server cannot make MCP Host report a block that did not happen.
 * Paths elsewhere (`/var`, `/opt`…) are not judged: whether the system part of the sandbox shows
 * them depends on the platform, and a message that may be wrong is worse than none.
 */
export function hiddenPathsIn(text: string, reach: SandboxReach, host: HostFacts = thisHost(), tmp = os.tmpdir()): HiddenPath[] {
  const found = new Map<string, HiddenPath>();
  const areas = hidingAreas(reach, host, tmp);
  let candidates = 0;
  for (const match of text.matchAll(PATH_IN_TEXT)) {
    if (++candidates > MAX_CANDIDATES) break;
    const raw = match[1].replace(TRAILING, '');
    if (raw === '~' || raw === '/' || raw.includes('\u0000')) continue;
    const absolute = raw.startsWith('~/') ? path.join(reach.home, raw.slice(2)) : path.normalize(raw);
    const kind = host.kind(absolute);
    if (kind === 'none') continue;
    const real = host.realpath(absolute);
    if (found.has(real)) continue;
    const denied = reach.denyRead.find((rule) => isWithin(real, rule));
    const reachable = [...reach.readWrite, ...reach.readOnly].some((dir) => isWithin(real, dir));
    let cause: HiddenPath['cause'] | undefined;
    if (denied !== undefined) cause = { kind: 'denyRead', rule: denied };
    else if (!reachable && areas.some((area) => isWithin(real, area))) cause = { kind: 'outside' };
    if (cause) found.set(real, { path: real, folder: kind === 'dir' ? real : path.dirname(real), cause });
  }
  return [...found.values()];
}

/**
 * On a machine with no sandbox, the stdio servers only `mcpHost.sandbox.default` would sandbox
 * (their entries do not set `sandboxEnabled`): the person is asked once whether they start
 * unsandboxed. An entry that sets `"sandboxEnabled": true` is never among them: it does not start
 * without a sandbox, whatever the answer.
 */
export function sandboxedOnlyByDefault(definitions: readonly ServerDefinition[], mode: SandboxDefault): ServerDefinition[] {
  return definitions.filter((d) => {
    if (d.type !== 'stdio' || d.sandboxEnabled !== undefined) return false;
    const defaulted = withSandboxDefault(d, mode);
    return defaulted.type === 'stdio' && defaulted.sandboxEnabled === true;
  });
}
