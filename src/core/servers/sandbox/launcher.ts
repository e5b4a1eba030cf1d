import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { serverEnvironment, StdioTransport, type StdioServerParams } from '../../transport/stdio';
import { withheldFromSandbox, withoutSecrets } from '../environment';
import { collectCaches, collectionDue, markUsed, seedCacheOnce } from './cache';
import { describeLimits, inControlGroups, sandboxLimits, type SandboxLimits } from './limits';
import {
  bwrapArgs,
  innerBwrapArgs,
  PROXY_SOCKET_NAME,
  SANDBOX_PROXY_PORT,
  withProxyBridge,
  type BwrapFacts,
  type LinuxProxy,
} from './linux';
import type * as ProxyModule from './proxy';
import type { BlockedConnection, Resolver } from './proxy';
import { seatbeltProfile } from './macos';
import { NotFollowedError, openChecked } from './nofollow';
import { claimMountPoints, makeMountPoints, pinsOf, protectedPathsOf, releaseMountPoints, withMountRegistry } from './protected';
import { computeReach, findOnPath, isWithin, thisHost } from './reach';
import { seccompProgram } from './seccomp';
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
  notWorldReadable,
  probe: (binary, args) => {
    const r = spawnSync(binary, args, { encoding: 'utf8', timeout: 10_000 });
    return { ok: r.status === 0, stderr: (r.stderr ?? r.error?.message ?? '').trim() };
  },
});

/** Every entry under `root` that not every user may read (a folder: not listed or not entered), not below one already found; links are not followed. */
function notWorldReadable(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory() && !e.isFile()) continue;
      const p = path.join(dir, e.name);
      let mode: number;
      try {
        mode = fs.lstatSync(p).mode;
      } catch {
        continue;
      }
      const others = e.isDirectory() ? 0o005 : 0o004;
      if ((mode & others) !== others) found.push(p);
      else if (e.isDirectory()) walk(p);
    }
  };
  walk(root);
  return found;
}

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

/** Where the server reaches MCP Host's filtering proxy: a socket folder bound into bubblewrap, or a loopback port (macOS). */
export type ProxyEndpoint = LinuxProxy | { port: number };

/** What sandboxedServer prepared on the host for one server: the protected paths (existing and made), and its limits. */
export interface LaunchPreparation {
  protected?: string[];
  /** The folders above protected paths, pinned (protected.ts). */
  pinned?: string[];
  limits?: Pick<SandboxLimits, 'cgroupProcs' | 'prlimit' | 'processes' | 'memory'>;
  /** What else to say in the description (a search cut short). */
  notes?: string[];
  /** On Linux, each root, protected path and pin opened without following a link (nofollow.ts): bubblewrap binds these objects. */
  handles?: ReadonlyMap<string, number>;
}

/**
 * The same server, started inside the sandbox whose boundary is `roots`; throws
 * SandboxUnavailableError where this machine has none (never starts it unsandboxed). A reach with
 * allowed domains needs the proxy's `endpoint` (sandboxedServer starts it); without one the
 * server gets no network. What must exist on the host first (the protected paths' mount points,
 * the launcher's cache, the control groups) is `prepared` by sandboxedServer.
 */
export function sandboxedParams(
  params: StdioServerParams,
  roots: readonly string[],
  settings: SandboxSettings | undefined,
  machine: SandboxMachine = thisMachine(),
  availability: SandboxAvailability = sandboxAvailability(machine),
  endpoint?: ProxyEndpoint,
  prepared: LaunchPreparation = {},
): SandboxedParams {
  if (!availability.ok) throw new SandboxUnavailableError(availability.reason);
  const { reach, command, args, env: ownEnv } = planOf(params, roots, settings, machine);
  reach.protected = prepared.protected ?? [];
  if (prepared.pinned?.length) reach.pinned = prepared.pinned;
  if (!endpoint) {
    reach.allowedDomains = [];
    reach.launcherDomains = [];
  }
  // No network: a launcher that installs packages uses what its cache holds, at once, instead of retrying the registry.
  const networkEnv: Record<string, string> = endpoint
    ? proxyEnvironment(`http://127.0.0.1:${'port' in endpoint ? endpoint.port : SANDBOX_PROXY_PORT}`)
    : { npm_config_offline: 'true', npm_config_update_notifier: 'false' };
  const limits = prepared.limits;
  const parentEnv = params.baseEnv ?? process.env;
  // What the entry names itself it gets: only the rest is withheld.
  const withheld = withheldFromSandbox(parentEnv).filter((name) => params.env?.[name] == null);
  const description = [
    describeReach(reach, shortener(machine.home)),
    ...(availability.kind === 'bubblewrap' && limits ? [describeLimits(limits)] : []),
    ...reach.notes,
    ...(prepared.notes ?? []),
    ...(withheld.length
      ? [
          `withheld ${withheld.length} ${withheld.length === 1 ? 'variable' : 'variables'} of the caller's environment: ${withheld.join(', ')}`,
        ]
      : []),
  ].join('; ');
  // bubblewrap gives the server a private /tmp of its own; sandbox-exec a private folder under the system's.
  let launched: { command: string; args: string[] };
  let tmp: string;
  let inputFds: Uint8Array[] | undefined;
  const passFds: number[] = [];
  if (availability.kind === 'bubblewrap') {
    const seccomp = seccompProgram();
    const seccompFd = seccomp ? 3 : undefined;
    inputFds = seccomp ? [seccomp] : undefined;
    // The checked objects follow the seccomp pipe, as the child's descriptors 3 + pipes, 4 + pipes, …
    const handles = prepared.handles;
    // One slot per bind, even for a path bound twice (a protected folder that is also pinned): bubblewrap closes each after its mount.
    const fdOf = (p: string) => {
      const host = handles?.get(p);
      return host === undefined ? undefined : 3 + (inputFds?.length ?? 0) + passFds.push(host) - 1;
    };
    const server = [...(limits?.prlimit ?? []), command, ...args];
    const proxy = endpoint && 'socketDir' in endpoint ? endpoint : undefined;
    const inner = proxy ? withProxyBridge(proxy, innerBwrapArgs(reach, machine, seccompFd), server[0], server.slice(1)) : server;
    launched = inControlGroups(limits?.cgroupProcs ?? [], availability.binary, [
      ...bwrapArgs(reach, machine, { proxy, seccompFd, fdOf }),
      '--',
      ...inner,
    ]);
    tmp = '/tmp';
  } else {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-host-sandbox-')));
    launched = {
      command: availability.binary,
      args: ['-p', seatbeltProfile(reach, tmp, endpoint && 'port' in endpoint ? endpoint.port : undefined), command, ...args],
    };
  }
  return {
    reach,
    description,
    params: {
      ...params,
      ...launched,
      cwd: reach.cwd,
      // The caller's secret-shaped variables stay out (environment.ts); the entry's own env keeps what it names.
      baseEnv: withoutSecrets(parentEnv),
      env: { ...params.env, ...ownEnv, ...networkEnv, TMPDIR: tmp },
      ...(inputFds ? { inputFds } : {}),
      ...(passFds.length ? { passFds } : {}),
    },
  };
}

function planOf(params: StdioServerParams, roots: readonly string[], settings: SandboxSettings | undefined, machine: SandboxMachine) {
  const env = serverEnvironment(params);
  const planned = computeReach(
    { command: params.command, args: params.args ?? [], cwd: params.cwd ?? process.cwd(), env, roots, settings },
    machine,
  );
  if (!planned.command) throw new SandboxUnavailableError(`Command not found: ${params.command} (on the PATH ${env.PATH ?? '(none)'})`);
  return { ...planned, command: planned.command };
}

/**
 * What points a server at the proxy: the variables curl, Python, Go, npm and most HTTP clients
 * read, nothing exempt (NO_PROXY empty: even the server's own loopback goes through the proxy,
 * where it is refused), and NODE_USE_ENV_PROXY for Node's own fetch and http (Node 24, 22.21 and
 * later; Node 20 ignores it, so a Node 20 server's plain fetch reaches nothing: it fails closed).
 */
function proxyEnvironment(url: string): Record<string, string> {
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    ALL_PROXY: url,
    all_proxy: url,
    NO_PROXY: '',
    no_proxy: '',
    NODE_USE_ENV_PROXY: '1',
    npm_config_update_notifier: 'false',
  };
}

/** A connection the proxy refused, with the sentence a person reads: the host, the port and what allows it. */
export interface SandboxBlocked extends BlockedConnection {
  server: string;
  message: string;
}

export interface SandboxedServerOptions {
  /** The server's name, for the message. */
  server: string;
  /** Told of every connection the proxy refuses. */
  onBlocked?(blocked: SandboxBlocked): void;
  /** How the message says to allow a host; by default `add "HOST" to sandbox.network.allowedDomains of server "NAME"`. */
  howToAllow?(host: string): string;
  /** The proxy's resolver (tests); the system's by default. */
  resolve?: Resolver;
}

/** The person's sentence for a refused connection. */
export function blockedMessage(blocked: BlockedConnection, howToAllow: (host: string) => string): string {
  const at = `sandbox blocked ${blocked.host}:${blocked.port}`;
  switch (blocked.reason) {
    case 'not-allowed':
      return `${at}: ${howToAllow(blocked.host)}`;
    case 'denied':
      return `${at}: ${blocked.address ? `its address ${blocked.address}` : 'it'} is in sandbox.network.deniedDomains`;
    case 'private-address':
      return `${at}: it resolves to ${blocked.address}, a loopback or private address, which only the exact name allows (not a *.suffix entry): ${howToAllow(blocked.host)}`;
  }
}

export interface SandboxedServer extends SandboxedParams {
  /** One transport to the server, for one launch: closing it (or the server exiting) also stops the proxy and releases what was prepared. */
  transport(): StdioTransport;
  /**
   * Stops the proxy (if any), removes the mount points made for protected names and the control
   * groups, for a caller that starts `params` itself, maybe more than once.
   */
  stop(): Promise<void>;
}

const INSTALL_SOCAT = 'install socat (Debian, Ubuntu: sudo apt install socat; Fedora: sudo dnf install socat; Arch: sudo pacman -S socat)';

/**
 * sandboxedParams, with what it needs made on the host first: the launcher's own cache, seeded
 * from the person's (cache.ts); an empty folder or file for each protected name that does not
 * exist yet (protected.ts); on Linux the control groups that limit it (limits.ts); and, when the
 * server has allowed domains, the filtering proxy: on Linux it listens on a Unix socket in a
 * private folder bound into the sandbox, where socat bridges the sandbox's own loopback to it; on
 * macOS on a loopback port the profile allows. `stop` undoes all of it.
 */
export async function sandboxedServer(
  params: StdioServerParams,
  roots: readonly string[],
  settings: SandboxSettings | undefined,
  options: SandboxedServerOptions,
  machine: SandboxMachine = thisMachine(),
  availability: SandboxAvailability = sandboxAvailability(machine),
): Promise<SandboxedServer> {
  if (!availability.ok) throw new SandboxUnavailableError(availability.reason);
  const { reach, seeds } = planOf(params, roots, settings, machine);
  const hostPath = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  let socat: string | undefined;
  if (availability.kind === 'bubblewrap' && reach.allowedDomains.length) {
    socat = findOnPath('socat', hostPath, machine);
    if (!socat)
      throw new SandboxUnavailableError(
        `network.allowedDomains needs socat to reach MCP Host's proxy from inside the sandbox, and it is not installed; ${INSTALL_SOCAT}`,
      );
  }
  const cacheRoot = sandboxCacheRoot(machine);
  const registry = path.join(cacheRoot, 'mounts');
  // The launcher's own cache (one per launch identity, reach.ts) exists before it is bound, seeded or not; its
  // identity's folder is marked used and claimed first, so that no collection removes it while it is seeded or runs.
  const ownCaches = machine.sandboxCache;
  const ownFolders = ownCaches ? reach.readWrite.filter((f) => isWithin(f, ownCaches)) : [];
  const identities = [...new Set(ownFolders.map((f) => path.dirname(f)))];
  const { cacheClaim, collect } = await withMountRegistry(registry, () => {
    for (const f of ownFolders) fs.mkdirSync(f, { recursive: true, mode: 0o700 });
    for (const identity of identities) markUsed(identity);
    return {
      cacheClaim: identities.length ? claimMountPoints(identities, registry) : undefined,
      collect: ownCaches !== undefined && collectionDue(registry),
    };
  });
  const cleanups: Array<() => void | Promise<void>> = [() => withMountRegistry(registry, () => releaseMountPoints(registry, cacheClaim))];
  // Other identities' caches, unused or over the size, go meanwhile; the launch does not wait for it, its end does.
  if (collect) {
    const collected = collectCaches(cacheRoot, registry).catch(() => []);
    cleanups.push(() => collected.then(() => undefined));
  }
  let prepared: LaunchPreparation;
  try {
    for (const seed of seeds) await seedCacheOnce(seed);
    const { protectedPaths, pinned, claim, notes, kinds } = await withMountRegistry(registry, () => {
      // What a launch that ended without its release left (its process killed, the window closed before it stopped) goes first.
      releaseMountPoints(registry);
      return prepareProtected(reach, settings, params.cwd ?? process.cwd(), machine, registry, cacheRoot);
    });
    cleanups.push(() => withMountRegistry(registry, () => releaseMountPoints(registry, claim)));
    let handles: Map<string, number> | undefined;
    if (availability.kind === 'bubblewrap') {
      // Opened before bubblewrap starts and kept until the sandbox stops (params may be started again): closed with it.
      handles = new Map();
      const opened = handles;
      cleanups.push(() => {
        for (const fd of opened.values()) fs.closeSync(fd);
        opened.clear();
      });
      try {
        // A read-write folder whose own path holds a link (a cache under a linked ~/.cache) is bound by path, as before; the roots are real paths.
        const writable = reach.readWrite.filter((p) => machine.realpath(p) === p);
        for (const p of [...writable, ...protectedPaths, ...pinned]) if (!opened.has(p)) opened.set(p, openChecked(p, kinds.get(p)));
      } catch (e) {
        if (e instanceof NotFollowedError)
          throw new SandboxUnavailableError(
            `Not sandboxed: ${e.message}: a server may have swapped it since it was checked; start it again`,
          );
        throw e;
      }
    }
    prepared = { protected: protectedPaths, pinned, notes, handles };
  } catch (e) {
    for (const cleanup of cleanups.reverse()) await cleanup();
    throw e;
  }
  let limits: SandboxLimits | undefined;
  if (availability.kind === 'bubblewrap') {
    // prlimit runs inside the sandbox, so only one in the system folders it shows.
    const prlimit = findOnPath('prlimit', hostPath, machine);
    limits = sandboxLimits(machine.uid, prlimit && /^\/(usr\/)?s?bin\//.test(prlimit) ? prlimit : undefined);
    cleanups.push(() => limits!.release());
  }
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    })());
  prepared.limits = limits;
  try {
    let endpoint: ProxyEndpoint | undefined;
    if (reach.allowedDomains.length) {
      const socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-host-proxy-'));
      cleanups.push(() => fs.rmSync(socketDir, { recursive: true, force: true }));
      const howToAllow =
        options.howToAllow ?? ((host: string) => `add "${host}" to sandbox.network.allowedDomains of server "${options.server}"`);
      const proxy = await loadProxy().startProxy({
        listen: socat ? { path: path.join(socketDir, PROXY_SOCKET_NAME) } : { port: 0 },
        rules: { allowed: reach.allowedDomains, denied: reach.deniedDomains },
        resolve: options.resolve,
        onBlocked: (blocked) => options.onBlocked?.({ ...blocked, server: options.server, message: blockedMessage(blocked, howToAllow) }),
      });
      cleanups.push(() => proxy.close());
      endpoint = socat ? { socketDir, socat, bwrap: availability.binary } : { port: proxy.port! };
    }
    const made = sandboxedParams(params, roots, settings, machine, availability, endpoint, prepared);
    // Once stopped, the descriptors are closed and their numbers may name other files of this process:
    // a start after that passes none, and bubblewrap refuses (never binds whatever a number names by then).
    const passed = made.params.passFds as number[] | undefined;
    if (passed) cleanups.push(() => void passed.splice(0));
    return { ...made, transport: () => new SandboxedStdioTransport(made.params, stop), stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** MCP Host's own folder for what sandboxes need on the host: the launchers' caches, and the mount points' registry (`mounts/`). */
const sandboxCacheRoot = (machine: SandboxMachine) => machine.sandboxCache ?? path.join(machine.home, '.cache', 'mcp-host', 'sandbox');

/**
 * Removes the mount points that launches ended without their release left on the host (a process
 * killed, a window closed before its servers stopped), when no live launch binds them; at the
 * extension's start, so that they do not wait for the next sandboxed launch (which removes them too).
 */
export async function sweepMountPoints(machine: SandboxMachine = thisMachine()): Promise<void> {
  const registry = path.join(sandboxCacheRoot(machine), 'mounts');
  if (machine.platform !== 'linux' || !fs.existsSync(registry)) return;
  await withMountRegistry(registry, () => releaseMountPoints(registry));
}

/**
 * The protected paths of every writable folder the server gets (the roots, and `allowWrite`
 * folders outside them), the missing ones made for the time it runs. A path `allowWrite` names
 * itself stays writable.
 */
function prepareProtected(
  reach: SandboxReach,
  settings: SandboxSettings | undefined,
  cwd: string,
  machine: SandboxMachine,
  registry: string,
  cacheRoot: string,
) {
  const expand = (p: string) =>
    p === '~' ? machine.home : p.startsWith('~/') ? path.join(machine.home, p.slice(2)) : path.resolve(cwd, p);
  // Both the path as written and where it leads: a link named there is left as it is, writable.
  const allowed = (settings?.filesystem?.allowWrite ?? []).flatMap((p) => [expand(p), machine.realpath(expand(p))]);
  const ownCaches = machine.sandboxCache ?? '';
  const folders = reach.readWrite.filter(
    (f, i, all) => !(ownCaches && isWithin(f, ownCaches)) && !all.some((other, j) => j !== i && other !== f && isWithin(f, other)),
  );
  const protectedPaths: string[] = [];
  const notes: string[] = [];
  const missing = [];
  const pins: string[] = [];
  const links: string[] = [];
  const existingKinds: Array<readonly [string, 'dir' | 'file']> = [];
  for (const folder of folders) {
    const found = protectedPathsOf(folder, allowed, undefined, machine.home);
    links.push(...found.links);
    if (found.note) notes.push(found.note);
    pins.push(...found.pins);
    for (const p of found.paths) if (p.exists) protectedPaths.push(p.path);
    for (const p of found.paths) if (p.exists) existingKinds.push([p.path, p.kind]);
    missing.push(...found.paths.filter((p) => !p.exists));
    // MCP Host's own sandbox cache inside a folder the server may write (XDG_CACHE_HOME in a root, a root
    // that is the home): read-only, the folders above it pinned. Else the server plants links in the mount
    // registry that MCP Host then follows, or fills another launch's cache. Its own cache, deeper, stays writable.
    if (isWithin(cacheRoot, folder)) {
      protectedPaths.push(cacheRoot);
      pins.push(...pinsOf(folder, [cacheRoot]));
    }
  }
  if (links.length)
    throw new SandboxUnavailableError(
      `Not sandboxed: ${links.join(', ')} ${links.length === 1 ? 'is a symbolic link' : 'are symbolic links'} in a folder the server may write, ` +
        'where a file that runs later is kept (or on the way to one): the server could replace the link with a file of its own. ' +
        'Make it a real folder or file, or name it in sandbox.filesystem.allowWrite to let the server write it.',
    );
  let made: string[] = [];
  try {
    if (machine.platform === 'linux') made = makeMountPoints(missing, registry);
  } catch (e) {
    if (!(e instanceof NotFollowedError)) throw e;
    // What was made before is released with no claim holding it.
    releaseMountPoints(registry);
    throw new SandboxUnavailableError(
      `Not sandboxed: ${e.message}, so the protected names behind it cannot be made there: a server running in another sandbox may have swapped it for a link`,
    );
  }
  // Only what exists can be bound; on macOS the profile denies writing a path whether it exists or not.
  const wanted = new Set(missing.map((p) => p.path));
  protectedPaths.push(...(machine.platform === 'linux' ? made.filter((p) => wanted.has(p)) : missing.map((p) => p.path)));
  // A pin is a folder as it is now, never through a link (a link in its place would bind the folder it names).
  const pinned = [...new Set(pins)].filter((p) => fs.lstatSync(p, { throwIfNoEntry: false })?.isDirectory());
  const sorted = [...new Set(protectedPaths)].sort();
  // What this launch binds, so that no other removes it meanwhile (protected.ts).
  const claim = machine.platform === 'linux' ? claimMountPoints([...sorted, ...pinned, ...made], registry) : undefined;
  // What each is, for opening it without following a link (nofollow.ts): a file or a folder; the others (the cache) folders.
  const kinds = new Map<string, 'dir' | 'file'>([...existingKinds, ...missing.map((p) => [p.path, p.kind] as const)]);
  for (const p of [...sorted, ...pinned]) if (!kinds.has(p)) kinds.set(p, 'dir');
  return { protectedPaths: sorted, pinned, claim, notes, kinds };
}

/** A stdio transport whose sandbox's proxy, mount points and control groups go with it. */
class SandboxedStdioTransport extends StdioTransport {
  constructor(
    params: StdioServerParams,
    private readonly release: () => Promise<void>,
  ) {
    super(params);
    this.onDidClose(() => void this.release());
  }

  override async close(): Promise<void> {
    await super.close();
    await this.release();
  }
}

/** proxy.ts, loaded on the first server with allowed domains. */
function loadProxy(): typeof ProxyModule {
  return require('./proxy') as typeof ProxyModule;
}

/** `~/x` for paths in the home, for a shorter description. */
export function shortener(home: string): (p: string) => string {
  return (p) => (p === home ? '~' : p.startsWith(home + path.sep) ? `~${p.slice(home.length)}` : p);
}
