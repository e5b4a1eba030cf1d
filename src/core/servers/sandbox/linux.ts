import * as path from 'node:path';
import type { HostFacts } from './reach';
import type { SandboxReach } from './settings';

/** The system, read-only: programs, libraries, configuration. */
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];
/**
 * Files of /etc no server needs and some would love: hidden (an empty file or folder in their
 * place), whatever their mode. Every other entry of /etc that not every user may read is hidden too
 * (`BwrapFacts.notWorldReadable`): the server's user may be host root (below).
 */
const HIDDEN_SYSTEM = [
  '/etc/shadow',
  '/etc/gshadow',
  '/etc/shadow-',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssh',
  '/etc/ssl/private',
  '/etc/security/opasswd',
];
/** Where the entries only some users may read are looked for: the system's configuration (the rest of the system is programs and libraries, and walking /usr costs seconds). */
export const PRIVATE_SYSTEM_ROOT = '/etc';
/**
 * Parts of /proc that change the whole machine, not the sandbox: read-only (the kernel's settings,
 * SysRq, interrupts, buses, file systems) or hidden (kernel memory, keys, timers, the scheduler's
 * and other debug views). A server whose user is host root could otherwise set
 * `kernel.core_pattern` to a program of its own, which the kernel then runs as root outside.
 */
const PROC_READ_ONLY = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs'];
const PROC_HIDDEN = [
  '/proc/kcore',
  '/proc/keys',
  '/proc/key-users',
  '/proc/timer_list',
  '/proc/sched_debug',
  '/proc/latency_stats',
  '/proc/acpi',
  '/proc/scsi',
  '/proc/asound',
];
/** The user inside when MCP Host runs as root: nobody, with no capability. */
const NOBODY = 65534;

export interface BwrapFacts extends HostFacts {
  /** Where a system folder is a link (`/bin -> usr/bin` on merged-/usr systems), its target. */
  readlink(p: string): string | undefined;
  uid: number;
  /** The entries under `root` (files and folders, not below a folder it lists) that not every user may read. */
  notWorldReadable(root: string): string[];
}

export interface BwrapOptions {
  /** The proxy of a server with allowed domains: socat bridges to it, and the server runs in a second, nested bubblewrap. */
  proxy?: LinuxProxy;
  /** The descriptor bubblewrap reads the seccomp filter from (seccomp.ts); absent where there is none for this architecture. */
  seccompFd?: number;
  /**
   * The descriptor (in bubblewrap) of a folder or file opened on the host without following any
   * link (nofollow.ts), where there is one: bound from that (`--bind-fd`, `--ro-bind-fd`), so the
   * mount is the object that was checked, not a path a server running in another sandbox may have
   * swapped for a link since.
   */
  fdOf?(p: string): number | undefined;
}

/**
 * bubblewrap's arguments for the reach: a new mount namespace that shows the system read-only, the
 * server's installation read-only, the roots and caches read-write, an empty home and /tmp, a
 * minimal /proc (its machine-wide parts read-only or hidden) and /dev; every namespace unshared
 * (so no network), no further user namespace, the session new (no TIOCSTI into the terminal), every
 * capability dropped, for root a user namespace where the server is nobody, and the seccomp filter.
 * Mounts go shortest path first, so a narrower rule over a wider one wins.
 *
 * With a proxy, these are the outer sandbox's arguments: socat runs there, unfiltered (it opens a
 * Unix socket to the proxy for each connection), and the server runs in `innerBwrapArgs`, which
 * shares its network but has its own processes, /proc, filter and no user namespaces.
 */
export function bwrapArgs(reach: SandboxReach, facts: BwrapFacts, options: BwrapOptions = {}): string[] {
  const { proxy } = options;
  const args = ['--unshare-all', '--unshare-user', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  // The nested sandbox needs a user namespace of its own: it disables them for the server.
  if (!proxy) args.push('--disable-userns');
  if (facts.uid === 0) args.push('--uid', String(NOBODY), '--gid', String(NOBODY));
  for (const dir of SYSTEM) {
    const link = facts.readlink(dir);
    if (link !== undefined) args.push('--symlink', link, dir);
    else if (facts.kind(dir) === 'dir') args.push('--ro-bind', dir, dir);
  }
  args.push('--proc', '/proc');
  // The outer sandbox of a proxied server runs only socat and the nested bubblewrap, which sets its
  // limit of user namespaces through this /proc; the server's own /proc is covered (innerBwrapArgs).
  if (!proxy) args.push(...procCovers(facts));
  args.push('--dev', '/dev', '--tmpfs', '/tmp', '--tmpfs', reach.home);
  const hidden = new Set([...HIDDEN_SYSTEM, ...facts.notWorldReadable(PRIVATE_SYSTEM_ROOT)]);
  for (const p of [...hidden].sort()) args.push(...hide(p, facts));
  const binds: { at: string; flag: string }[] = [
    ...reach.readOnly.map((at) => ({ at, flag: '--ro-bind' })),
    ...reach.readWrite.map((at) => ({ at, flag: '--bind' })),
    ...reach.protected.map((at) => ({ at, flag: '--ro-bind' })),
    ...(reach.pinned ?? []).map((at) => ({ at, flag: '--bind' })),
  ];
  // Shorter first, and at equal length read-write first so that a read-only rule for the same folder wins.
  binds.sort((a, b) => depth(a.at) - depth(b.at) || (a.flag === '--bind' ? -1 : 1));
  const system = SYSTEM.filter((dir) => facts.kind(dir) === 'dir' && facts.readlink(dir) === undefined);
  const inSystem = (p: string) => system.some((dir) => p === dir || p.startsWith(dir + path.sep));
  for (const { at, flag } of binds) {
    // The system is already there, read-only: a runtime in /usr needs no second mount.
    if (flag === '--ro-bind' && inSystem(at)) continue;
    const fd = options.fdOf?.(at);
    // bubblewrap checks that the destination, after the mount, is the descriptor's object (not a link put in its place).
    if (fd !== undefined) args.push(`${flag}-fd`, String(fd), at);
    else args.push(flag, at, at);
  }
  for (const at of reach.denyWrite) args.push('--ro-bind', at, at);
  for (const at of reach.denyRead) args.push(...hide(at, facts));
  if (proxy) {
    // The host's /proc, under an empty folder no process can open: the kernel lets the nested bubblewrap
    // (in a user namespace of its own) mount a /proc only where one is fully visible in its mount namespace.
    args.push('--bind', '/proc', `${HOST_PROC_HIDDEN}/proc`, '--tmpfs', HOST_PROC_HIDDEN);
    // Read-only: socat connects to the socket but cannot put another in its place.
    args.push('--ro-bind', proxy.socketDir, PROXY_DIR_INSIDE);
    if (!inSystem(proxy.socat)) args.push('--ro-bind', proxy.socat, proxy.socat);
    if (!inSystem(proxy.bwrap)) args.push('--ro-bind', proxy.bwrap, proxy.bwrap);
  }
  if (!proxy && options.seccompFd !== undefined) args.push('--seccomp', String(options.seccompFd));
  args.push('--setenv', 'TMPDIR', '/tmp', '--chdir', reach.cwd);
  return args;
}

/**
 * The nested bubblewrap a proxied server runs in, inside the outer sandbox: everything of the
 * outer one's files as they are (`--bind / /` keeps each mount's read-only flag, and the outer
 * mounts are locked), the same network (socat's loopback), but processes of its own (socat and the
 * outer sandbox's processes are neither visible nor traceable), a new /proc with the same covers,
 * the proxy's folder hidden, no user namespaces and the seccomp filter.
 */
export function innerBwrapArgs(reach: SandboxReach, facts: BwrapFacts, seccompFd: number | undefined): string[] {
  const args = ['--unshare-user', '--disable-userns', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
  args.push('--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--bind', '/', '/', '--proc', '/proc', ...procCovers(facts));
  args.push('--dev', '/dev', '--tmpfs', PROXY_DIR_INSIDE);
  if (seccompFd !== undefined) args.push('--seccomp', String(seccompFd));
  args.push('--chdir', reach.cwd);
  return args;
}

/** The machine-wide parts of /proc, read-only or hidden, where this kernel has them. */
function procCovers(facts: HostFacts): string[] {
  const args: string[] = [];
  for (const p of PROC_READ_ONLY) if (facts.kind(p) !== 'none') args.push('--ro-bind', p, p);
  for (const p of PROC_HIDDEN) args.push(...hide(p, facts));
  return args;
}

/** Where the proxy's private folder appears inside the sandbox, and the socket in it. */
const PROXY_DIR_INSIDE = '/run/mcp-host-proxy';
/** Where the outer sandbox of a proxied server keeps the host's /proc, covered (bwrapArgs). */
const HOST_PROC_HIDDEN = '/run/mcp-host-proc';
export const PROXY_SOCKET_NAME = 'proxy.sock';
/** The port on the sandbox's own loopback where socat passes connections on to the proxy's socket. */
export const SANDBOX_PROXY_PORT = 3128;

/** The proxy of a server with allowed domains: its Unix socket's private folder on the host, socat, and bubblewrap (for the nested sandbox). */
export interface LinuxProxy {
  socketDir: string;
  socat: string;
  bwrap: string;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The server's command line behind a small shell, run in the outer sandbox, that starts socat on
 * the sandbox's loopback (127.0.0.1:SANDBOX_PROXY_PORT, to the proxy's socket), waits until it
 * listens (its line in /proc/net/tcp, which holds the sandbox's own sockets only), then becomes
 * the nested bubblewrap that runs the server (`inner`: its arguments).
 */
export function withProxyBridge(proxy: LinuxProxy, inner: readonly string[], command: string, args: readonly string[]): string[] {
  const hexPort = SANDBOX_PROXY_PORT.toString(16).toUpperCase().padStart(4, '0');
  const listening = `0100007F:${hexPort} 00000000:0000 0A`;
  const script = [
    `${shellQuote(proxy.socat)} TCP-LISTEN:${SANDBOX_PROXY_PORT},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:${PROXY_DIR_INSIDE}/${PROXY_SOCKET_NAME} </dev/null >/dev/null &`,
    `i=0; while [ $i -lt 500 ] && ! grep -q '${listening}' /proc/net/tcp; do sleep 0.01; i=$((i+1)); done`,
    'exec "$@"',
  ].join('\n');
  return ['/bin/sh', '-c', script, 'mcp-host-sandbox', proxy.bwrap, ...inner, '--', command, ...args];
}

const depth = (p: string) => p.split(path.sep).filter(Boolean).length;

/** An empty folder over a folder, /dev/null over a file. */
function hide(p: string, facts: HostFacts): string[] {
  switch (facts.kind(p)) {
    case 'dir':
      return ['--tmpfs', p, '--remount-ro', p];
    case 'file':
      return ['--ro-bind', '/dev/null', p];
    default:
      return [];
  }
}
