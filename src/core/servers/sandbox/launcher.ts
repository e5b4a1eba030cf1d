import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { StdioServerParams } from '../../transport/stdio';
import { bwrapArgs, type BwrapFacts } from './linux';
import { seatbeltProfile } from './macos';
import { computeReach, findOnPath, thisHost } from './reach';
import { describeReach, type SandboxReach, type SandboxSettings } from './settings';

/** Which sandbox this machine has, or why it has none (with what to install). */
export type SandboxAvailability = { ok: true; kind: 'bubblewrap' | 'seatbelt'; binary: string } | { ok: false; reason: string };

/** Why a server that asks for a sandbox does not start. */
export class SandboxUnavailableError extends Error {}

export interface SandboxMachine extends BwrapFacts {
  /** Runs `binary args` and says whether it exited 0, with its stderr: the probe that the sandbox really works here. */
  probe(binary: string, args: string[]): { ok: boolean; stderr: string };
}

export const thisMachine = (): SandboxMachine => ({
  ...thisHost(),
  readlink: (p) => {
    try {
      return fs.readlinkSync(p);
    } catch {
      return undefined;
    }
  },
  uid: process.getuid?.() ?? -1,
  probe: (binary, args) => {
    const r = spawnSync(binary, args, { encoding: 'utf8', timeout: 10_000 });
    return { ok: r.status === 0, stderr: (r.stderr ?? r.error?.message ?? '').trim() };
  },
});

const INSTALL_BWRAP =
  'install bubblewrap (Debian, Ubuntu: sudo apt install bubblewrap; Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap)';

/** Whether stdio servers can be sandboxed here; asked once per machine object. */
export function sandboxAvailability(machine: SandboxMachine = thisMachine()): SandboxAvailability {
  switch (machine.platform) {
    case 'linux': {
      const bwrap = findOnPath('bwrap', { PATH: process.env.PATH ?? '/usr/bin:/bin' }, machine);
      if (!bwrap) return { ok: false, reason: `No sandbox on this machine: bubblewrap (bwrap) is not installed; ${INSTALL_BWRAP}` };
      const userns = machine.uid === 0 ? ['--unshare-user', '--uid', '65534'] : [];
      const probe = machine.probe(bwrap, ['--unshare-all', ...userns, '--cap-drop', 'ALL', '--ro-bind', '/', '/', 'true']);
      if (!probe.ok)
        return {
          ok: false,
          reason:
            `bubblewrap is installed but cannot make a sandbox here (${probe.stderr || 'it failed'}): unprivileged user namespaces are ` +
            'probably disabled (sysctl kernel.unprivileged_userns_clone, or on Ubuntu 24.04 and later kernel.apparmor_restrict_unprivileged_userns and an AppArmor profile for bwrap)',
        };
      return { ok: true, kind: 'bubblewrap', binary: bwrap };
    }
    case 'darwin':
      return machine.kind('/usr/bin/sandbox-exec') === 'file'
        ? { ok: true, kind: 'seatbelt', binary: '/usr/bin/sandbox-exec' }
        : { ok: false, reason: 'No sandbox on this machine: /usr/bin/sandbox-exec, part of macOS, is missing' };
    case 'win32':
      return {
        ok: false,
        reason:
          'MCP Host has no sandbox on Windows yet: run the server inside WSL (with bubblewrap installed there), or start it unsandboxed by setting "sandboxEnabled": false on its entry',
      };
    default:
      return { ok: false, reason: `MCP Host has no sandbox on ${machine.platform}` };
  }
}

export interface SandboxedParams {
  /** The command line that starts the server inside the sandbox. */
  params: StdioServerParams;
  reach: SandboxReach;
  /** "sandboxed: reads and writes ws/, network: none", and what could not be honoured. */
  description: string;
}

/**
 * The same server, started inside the sandbox whose boundary is `roots`; throws
 * SandboxUnavailableError where this machine has none (never starts it unsandboxed).
 */
export function sandboxedParams(
  params: StdioServerParams,
  roots: readonly string[],
  settings: SandboxSettings | undefined,
  machine: SandboxMachine = thisMachine(),
  availability: SandboxAvailability = sandboxAvailability(machine),
): SandboxedParams {
  if (!availability.ok) throw new SandboxUnavailableError(availability.reason);
  const env: NodeJS.ProcessEnv = { ...(params.baseEnv ?? process.env) };
  for (const [k, v] of Object.entries(params.env ?? {})) {
    if (v === null) delete env[k];
    else env[k] = v;
  }
  const { reach, command, args } = computeReach(
    { command: params.command, args: params.args ?? [], cwd: params.cwd ?? process.cwd(), env, roots, settings },
    machine,
  );
  if (!command) throw new SandboxUnavailableError(`Command not found: ${params.command} (on the PATH ${env.PATH ?? '(none)'})`);
  // No network: a launcher that installs packages uses what its cache holds, at once, instead of retrying the registry.
  const offline: Record<string, string> = reach.allowedDomains.length
    ? {}
    : { npm_config_offline: 'true', npm_config_update_notifier: 'false' };
  const description = [describeReach(reach, shortener(machine.home)), ...reach.notes].join('; ');
  // bubblewrap gives the server a private /tmp of its own; sandbox-exec a private folder under the system's.
  let wrapped: string[];
  let tmp: string;
  if (availability.kind === 'bubblewrap') {
    wrapped = [...bwrapArgs(reach, machine), '--', command, ...args];
    tmp = '/tmp';
  } else {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-host-sandbox-')));
    wrapped = ['-p', seatbeltProfile(reach, tmp), command, ...args];
  }
  return {
    reach,
    description,
    params: { ...params, command: availability.binary, args: wrapped, cwd: reach.cwd, env: { ...params.env, ...offline, TMPDIR: tmp } },
  };
}

/** `~/x` for paths in the home, for a shorter description. */
export function shortener(home: string): (p: string) => string {
  return (p) => (p === home ? '~' : p.startsWith(home + path.sep) ? `~${p.slice(home.length)}` : p);
}
