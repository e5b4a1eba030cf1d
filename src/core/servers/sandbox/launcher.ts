import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { serverEnvironment, StdioTransport, type StdioServerParams } from '../../transport/stdio';
import { bwrapArgs, PROXY_SOCKET_NAME, SANDBOX_PROXY_PORT, withProxyBridge, type BwrapFacts, type LinuxProxy } from './linux';
import type * as ProxyModule from './proxy';
import type { BlockedConnection, Resolver, RunningProxy } from './proxy';
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

/** Where the server reaches MCP Host's filtering proxy: a socket folder bound into bubblewrap, or a loopback port (macOS). */
export type ProxyEndpoint = LinuxProxy | { port: number };

/**
 * The same server, started inside the sandbox whose boundary is `roots`; throws
 * SandboxUnavailableError where this machine has none (never starts it unsandboxed). A reach with
 * allowed domains needs the proxy's `endpoint` (sandboxedServer starts it); without one the
 * server gets no network.
 */
export function sandboxedParams(
  params: StdioServerParams,
  roots: readonly string[],
  settings: SandboxSettings | undefined,
  machine: SandboxMachine = thisMachine(),
  availability: SandboxAvailability = sandboxAvailability(machine),
  endpoint?: ProxyEndpoint,
): SandboxedParams {
  if (!availability.ok) throw new SandboxUnavailableError(availability.reason);
  const { reach, command, args } = planOf(params, roots, settings, machine);
  if (!endpoint) {
    reach.allowedDomains = [];
    reach.launcherDomains = [];
  }
  // No network: a launcher that installs packages uses what its cache holds, at once, instead of retrying the registry.
  const networkEnv: Record<string, string> = endpoint
    ? proxyEnvironment(`http://127.0.0.1:${'port' in endpoint ? endpoint.port : SANDBOX_PROXY_PORT}`)
    : { npm_config_offline: 'true', npm_config_update_notifier: 'false' };
  const description = [describeReach(reach, shortener(machine.home)), ...reach.notes].join('; ');
  // bubblewrap gives the server a private /tmp of its own; sandbox-exec a private folder under the system's.
  let wrapped: string[];
  let tmp: string;
  if (availability.kind === 'bubblewrap') {
    const proxy = endpoint && 'socketDir' in endpoint ? endpoint : undefined;
    const inner = proxy ? withProxyBridge(proxy.socat, command, args) : [command, ...args];
    wrapped = [...bwrapArgs(reach, machine, proxy), '--', ...inner];
    tmp = '/tmp';
  } else {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-host-sandbox-')));
    wrapped = ['-p', seatbeltProfile(reach, tmp, endpoint && 'port' in endpoint ? endpoint.port : undefined), command, ...args];
  }
  return {
    reach,
    description,
    params: { ...params, command: availability.binary, args: wrapped, cwd: reach.cwd, env: { ...params.env, ...networkEnv, TMPDIR: tmp } },
  };
}

function planOf(params: StdioServerParams, roots: readonly string[], settings: SandboxSettings | undefined, machine: SandboxMachine) {
  const env = serverEnvironment(params);
  const { reach, command, args } = computeReach(
    { command: params.command, args: params.args ?? [], cwd: params.cwd ?? process.cwd(), env, roots, settings },
    machine,
  );
  if (!command) throw new SandboxUnavailableError(`Command not found: ${params.command} (on the PATH ${env.PATH ?? '(none)'})`);
  return { reach, command, args };
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
  /** One transport to the server, for one launch: closing it (or the server exiting) also stops the proxy. */
  transport(): StdioTransport;
  /** Stops the proxy (if any), for a caller that starts `params` itself, maybe more than once. */
  stop(): Promise<void>;
}

const INSTALL_SOCAT = 'install socat (Debian, Ubuntu: sudo apt install socat; Fedora: sudo dnf install socat; Arch: sudo pacman -S socat)';

/**
 * sandboxedParams, with the filtering proxy started first when the server has allowed domains:
 * on Linux it listens on a Unix socket in a private folder bound into the sandbox, where socat
 * bridges the sandbox's own loopback to it; on macOS on a loopback port the profile allows.
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
  const { reach } = planOf(params, roots, settings, machine);
  if (!reach.allowedDomains.length) {
    const plain = sandboxedParams(params, roots, settings, machine, availability);
    return { ...plain, transport: () => new StdioTransport(plain.params), stop: () => Promise.resolve() };
  }
  let socat: string | undefined;
  if (availability.kind === 'bubblewrap') {
    socat = findOnPath('socat', { PATH: process.env.PATH ?? '/usr/bin:/bin' }, machine);
    if (!socat)
      throw new SandboxUnavailableError(
        `network.allowedDomains needs socat to reach MCP Host's proxy from inside the sandbox, and it is not installed; ${INSTALL_SOCAT}`,
      );
  }
  const socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-host-proxy-'));
  const howToAllow =
    options.howToAllow ?? ((host: string) => `add "${host}" to sandbox.network.allowedDomains of server "${options.server}"`);
  let proxy: RunningProxy;
  try {
    proxy = await loadProxy().startProxy({
      listen: socat ? { path: path.join(socketDir, PROXY_SOCKET_NAME) } : { port: 0 },
      rules: { allowed: reach.allowedDomains, denied: reach.deniedDomains },
      resolve: options.resolve,
      onBlocked: (blocked) => options.onBlocked?.({ ...blocked, server: options.server, message: blockedMessage(blocked, howToAllow) }),
    });
  } catch (e) {
    fs.rmSync(socketDir, { recursive: true, force: true });
    throw e;
  }
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= proxy.close().finally(() => fs.rmSync(socketDir, { recursive: true, force: true })));
  try {
    const endpoint: ProxyEndpoint = socat ? { socketDir, socat } : { port: proxy.port! };
    const withProxy = sandboxedParams(params, roots, settings, machine, availability, endpoint);
    return { ...withProxy, transport: () => new ProxiedStdioTransport(withProxy.params, stop), stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** A stdio transport whose proxy stops with it. */
class ProxiedStdioTransport extends StdioTransport {
  constructor(
    params: StdioServerParams,
    private readonly stopProxy: () => Promise<void>,
  ) {
    super(params);
    this.onDidClose(() => void this.stopProxy());
  }

  override async close(): Promise<void> {
    await super.close();
    await this.stopProxy();
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
