import type { SandboxReach } from './settings';

/** What every program on macOS reads: the system, its frameworks, the dynamic linker's caches, Homebrew's prefix. */
const SYSTEM_READ = [
  '/usr',
  '/bin',
  '/sbin',
  '/System',
  '/Library',
  '/private/etc',
  '/private/var/db/timezone',
  '/opt/homebrew',
  '/usr/local',
  '/dev',
];

const quote = (p: string) => JSON.stringify(p);
const subpaths = (list: readonly string[]) => list.map((p) => `(subpath ${quote(p)})`).join(' ');

/**
 * A `sandbox-exec` (Seatbelt) profile for the reach: everything denied, then the system and the
 * server's installation readable, the roots, caches and the private temporary folder readable and
 * writable, the protected names and the deny lists over those, and no network, but for the port of MCP Host's filtering
 * proxy on the loopback when the server has allowed domains (it needs no resolver either: the
 * proxy resolves names).
 */
export function seatbeltProfile(reach: SandboxReach, tmp: string, proxyPort?: number): string {
  const lines = [
    '(version 1)',
    '(deny default)',
    '(allow process-exec process-fork)',
    '(allow signal (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo") (global-name "com.apple.trustd.agent"))',
    '(allow ipc-posix-shm-read-data ipc-posix-shm-read-metadata)',
    '(allow file-read-metadata)',
    `(allow file-read* (literal "/") ${subpaths([...SYSTEM_READ, ...reach.readOnly])})`,
    `(allow file-read* file-write* ${subpaths([...reach.readWrite, tmp])} (literal "/dev/null") (literal "/dev/tty"))`,
  ];
  // The files that run later (protected.ts): Seatbelt denies a path whether it exists or not, so nothing is made for them.
  const neverWritten = [...reach.protected, ...reach.denyWrite];
  if (neverWritten.length) lines.push(`(deny file-write* ${subpaths(neverWritten)})`);
  if (reach.denyRead.length) lines.push(`(deny file-read* file-write* ${subpaths(reach.denyRead)})`);
  lines.push('(deny network*)');
  if (proxyPort !== undefined) lines.push(`(allow network-outbound (remote ip "localhost:${proxyPort}"))`);
  return `${lines.join('\n')}\n`;
}
