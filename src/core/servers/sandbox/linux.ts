import * as path from 'node:path';
import type { HostFacts } from './reach';
import type { SandboxReach } from './settings';

/** The system, read-only: programs, libraries, configuration. */
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];
/** Files of /etc no server needs and some would love: hidden (an empty file or folder in their place). */
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
/** The user inside when MCP Host runs as root: nobody, with no capability. */
const NOBODY = 65534;

export interface BwrapFacts extends HostFacts {
  /** Where a system folder is a link (`/bin -> usr/bin` on merged-/usr systems), its target. */
  readlink(p: string): string | undefined;
  uid: number;
}

/**
 * bubblewrap's arguments for the reach: a new mount namespace that shows the system read-only, the
 * server's installation read-only, the roots and caches read-write, an empty home and /tmp, a
 * minimal /proc and /dev; every namespace unshared (so no network), the session new (no TIOCSTI
 * into the terminal), every capability dropped, and, for root, a user namespace where the server
 * is nobody. Mounts go shortest path first, so a narrower rule over a wider one wins.
 */
export function bwrapArgs(reach: SandboxReach, facts: BwrapFacts, proxy?: LinuxProxy): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  if (facts.uid === 0) args.push('--unshare-user', '--uid', String(NOBODY), '--gid', String(NOBODY));
  for (const dir of SYSTEM) {
    const link = facts.readlink(dir);
    if (link !== undefined) args.push('--symlink', link, dir);
    else if (facts.kind(dir) === 'dir') args.push('--ro-bind', dir, dir);
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--tmpfs', reach.home);
  for (const hidden of HIDDEN_SYSTEM) args.push(...hide(hidden, facts));
  const binds: { at: string; flag: string }[] = [
    ...reach.readOnly.map((at) => ({ at, flag: '--ro-bind' })),
    ...reach.readWrite.map((at) => ({ at, flag: '--bind' })),
  ];
  // Shorter first, and at equal length read-write first so that a read-only rule for the same folder wins.
  binds.sort((a, b) => depth(a.at) - depth(b.at) || (a.flag === '--bind' ? -1 : 1));
  const system = SYSTEM.filter((dir) => facts.kind(dir) === 'dir' && facts.readlink(dir) === undefined);
  for (const { at, flag } of binds) {
    // The system is already there, read-only: a runtime in /usr needs no second mount.
    if (flag === '--ro-bind' && system.some((dir) => at === dir || at.startsWith(dir + path.sep))) continue;
    args.push(flag, at, at);
  }
  for (const at of reach.denyWrite) args.push('--ro-bind', at, at);
  for (const at of reach.denyRead) args.push(...hide(at, facts));
  if (proxy) {
    // Read-only: the server connects to the socket but cannot put another in its place.
    args.push('--ro-bind', proxy.socketDir, PROXY_DIR_INSIDE);
    if (!system.some((dir) => proxy.socat.startsWith(dir + path.sep))) args.push('--ro-bind', proxy.socat, proxy.socat);
  }
  args.push('--setenv', 'TMPDIR', '/tmp', '--chdir', reach.cwd);
  return args;
}

/** Where the proxy's private folder appears inside the sandbox, and the socket in it. */
const PROXY_DIR_INSIDE = '/run/mcp-host-proxy';
export const PROXY_SOCKET_NAME = 'proxy.sock';
/** The port on the sandbox's own loopback where socat passes connections on to the proxy's socket. */
export const SANDBOX_PROXY_PORT = 3128;

/** The proxy of a server with allowed domains: its Unix socket's private folder on the host, and socat. */
export interface LinuxProxy {
  socketDir: string;
  socat: string;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The server's command line behind a small shell that starts socat on the sandbox's loopback
 * (127.0.0.1:SANDBOX_PROXY_PORT, to the proxy's socket), waits until it listens (its line in
 * /proc/net/tcp, which holds the sandbox's own sockets only), then becomes the server.
 */
export function withProxyBridge(socat: string, command: string, args: readonly string[]): string[] {
  const hexPort = SANDBOX_PROXY_PORT.toString(16).toUpperCase().padStart(4, '0');
  const listening = `0100007F:${hexPort} 00000000:0000 0A`;
  const script = [
    `${shellQuote(socat)} TCP-LISTEN:${SANDBOX_PROXY_PORT},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:${PROXY_DIR_INSIDE}/${PROXY_SOCKET_NAME} </dev/null >/dev/null &`,
    `i=0; while [ $i -lt 500 ] && ! grep -q '${listening}' /proc/net/tcp; do sleep 0.01; i=$((i+1)); done`,
    'exec "$@"',
  ].join('\n');
  return ['/bin/sh', '-c', script, 'mcp-host-sandbox', command, ...args];
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
