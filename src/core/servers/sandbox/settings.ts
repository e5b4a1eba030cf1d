/**
 * A stdio server's sandbox, in VS Code's own `mcp.json` terms: `sandboxEnabled` on the entry, and
 * `sandbox` with `filesystem.allowWrite`, `filesystem.denyRead`, `filesystem.denyWrite`,
 * `network.allowedDomains` and `network.deniedDomains` (paths may start with `~/`).
 */
export interface SandboxSettings {
  filesystem?: { allowWrite?: string[]; denyRead?: string[]; denyWrite?: string[] };
  network?: { allowedDomains?: string[]; deniedDomains?: string[] };
}

/** What a sandboxed server may reach: every path absolute, every list settled. */
export interface SandboxReach {
  /** Read and write: the roots, `filesystem.allowWrite`, the launcher's caches. */
  readWrite: string[];
  /** Read only: the server's own installation and the runtime it runs on (the system is implied). */
  readOnly: string[];
  /**
   * Read only although in a read-write folder: the files that run later (protected.ts), existing or
   * made empty for the time the server runs. Filled in at launch; empty in a preview.
   */
  protected: string[];
  /** Folders between a read-write folder and a protected path, bound onto themselves: still writable, but never renamed or removed (protected.ts). */
  pinned?: string[];
  denyRead: string[];
  denyWrite: string[];
  /** Hosts (or `*.suffix`) the server may connect to through the proxy, settled (domains.ts); empty means no network at all. */
  allowedDomains: string[];
  /** Hosts (or `*.suffix`, or addresses) never connected to, whatever allowedDomains says. */
  deniedDomains: string[];
  /** Those of allowedDomains its launcher added (npx: the npm registry), not the person's settings. */
  launcherDomains: string[];
  /** The folder the process starts in (inside the reach). */
  cwd: string;
  /** The person's home folder: hidden but for what the lists above name. */
  home: string;
  /** What of the settings could not be honoured, for the log and the consent. */
  notes: string[];
}

/**
 * The limits as a person reads them in a consent, a tooltip or the log: "sandboxed: reads and
 * writes ws/, also reads /usr/lib/node_modules/, network: none". Every folder the server can read
 * beyond the system is named.
 */
export function describeReach(
  reach: Pick<SandboxReach, 'readWrite' | 'allowedDomains' | 'denyRead' | 'denyWrite'> &
    Partial<Pick<SandboxReach, 'launcherDomains' | 'deniedDomains' | 'readOnly'>>,
  shorten = (p: string) => p,
): string {
  const parts = [`sandboxed: reads and writes ${reach.readWrite.map((p) => `${shorten(p)}/`).join(', ') || 'nothing'}`];
  if (reach.readOnly?.length) parts.push(`also reads ${reach.readOnly.map((p) => shorten(p)).join(', ')}`);
  if (reach.denyRead.length) parts.push(`never reads ${reach.denyRead.map(shorten).join(', ')}`);
  if (reach.denyWrite.length) parts.push(`never writes ${reach.denyWrite.map(shorten).join(', ')}`);
  const launcher = reach.launcherDomains ?? [];
  const own = reach.allowedDomains.filter((d) => !launcher.includes(d));
  let network = own.length ? `network: only ${own.join(', ')} (through MCP Host's proxy)` : 'network: none';
  if (own.length && launcher.length) network += ` and ${launcher.join(', ')} (for its launcher to fetch the package)`;
  if (own.length && reach.deniedDomains?.length) network += `, never ${reach.deniedDomains.join(', ')}`;
  parts.push(network);
  return parts.join(', ');
}

/** The limits an audit record names for a sandboxed server: what it could write and read beyond the system, and where it could connect. */
export interface SandboxLimits {
  readWrite: string[];
  readOnly: string[];
  denyRead: string[];
  denyWrite: string[];
  /** Hosts; empty: no network. */
  network: string[];
}

export function auditedSandbox(reach: SandboxReach): SandboxLimits {
  return {
    readWrite: reach.readWrite,
    readOnly: reach.readOnly,
    denyRead: reach.denyRead,
    denyWrite: reach.denyWrite,
    network: reach.allowedDomains,
  };
}
