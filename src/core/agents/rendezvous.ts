/**
 * Where an agent's relay finds this window's gateway, without the agent's entry holding anything
 * but a command: a folder of the person's own, `~/.mcp-host` (mode 0700, outside any workspace),
 * holds
 * - `bin/mcp-host-relay`, the launcher every entry names: the extension writes it again at each
 *   activation, so it runs the relay of the extension installed now with the runtime the extension
 *   host has, and an entry survives an extension update;
 * - `gateways/<key>.json` (mode 0600), one per workspace with a window open: the gateway's address,
 *   the agents' token, the workspace's folders. The relay takes the one whose folder holds its
 *   working folder (an agent starts its servers in its project), and for a user-scope entry, failing
 *   that, the window written last that answers.
 * Node's own modules only: the relay (dist/relay.js) uses it.
 */
import { createHash } from 'node:crypto';
import { promises as fs, statSync } from 'node:fs';
import * as path from 'node:path';

export const RENDEZVOUS_FOLDER = '.mcp-host';

/** What a window writes for its agents' relays. */
export interface GatewayRecord {
  version: 1;
  /** The workspace's folders (absolute paths). */
  folders: string[];
  /** The gateway's relay listener: a socket path or `127.0.0.1:<port>` (`ChatGateway.relayTarget`). */
  address: string;
  /** The agents' token of this window. */
  token: string;
  pid: number;
  /** When it was written (ms since the epoch). */
  written: number;
}

export function rendezvousFolder(home: string): string {
  return path.join(home, RENDEZVOUS_FOLDER);
}

export function launcherPath(home: string, platform: NodeJS.Platform = process.platform): string {
  return path.join(rendezvousFolder(home), 'bin', platform === 'win32' ? 'mcp-host-relay.cmd' : 'mcp-host-relay');
}

/**
 * The launcher's text: runs `relay` with `runtime` (the extension host's: Node, or Electron as Node),
 * else with a `node` on the PATH when that runtime went (VS Code updated and no window opened since).
 */
export function launcherText(runtime: string, relay: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') {
    return [
      '@echo off',
      'rem Written by MCP Host at each activation: runs the relay of the MCP Host installed now.',
      `if exist "${runtime}" if exist "${relay}" (set ELECTRON_RUN_AS_NODE=1 & "${runtime}" "${relay}" agent %*) & exit /b %errorlevel%`,
      `if exist "${relay}" (node "${relay}" agent %*) & exit /b %errorlevel%`,
      'echo MCP Host: its relay is not installed any more; open VS Code with MCP Host once to write this launcher again. 1>&2',
      'exit /b 1',
      '',
    ].join('\r\n');
  }
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return [
    '#!/bin/sh',
    '# Written by MCP Host at each activation: runs the relay of the MCP Host installed now.',
    `runtime=${q(runtime)}`,
    `relay=${q(relay)}`,
    'if [ -f "$relay" ]; then',
    '  if [ -x "$runtime" ]; then ELECTRON_RUN_AS_NODE=1 exec "$runtime" "$relay" agent "$@"; fi',
    '  exec node "$relay" agent "$@"',
    'fi',
    'echo "MCP Host: its relay is not installed any more ($relay); open VS Code with MCP Host once to write this launcher again." >&2',
    'exit 1',
    '',
  ].join('\n');
}

/** The file of a workspace's record: its name hashes what identifies the workspace (its file, or its first folder). */
export function gatewayRecordFile(home: string, workspaceKey: string): string {
  const name = createHash('sha256').update(workspaceKey).digest('hex').slice(0, 16);
  return path.join(rendezvousFolder(home), 'gateways', `${name}.json`);
}

/** Makes the folder (0700, and made 0700 again if it was not). */
async function privateFolder(folder: string): Promise<void> {
  await fs.mkdir(folder, { recursive: true, mode: 0o700 });
  if (process.platform !== 'win32') await fs.chmod(folder, 0o700);
}

/** Writes the launcher (0700) where every entry points. */
export async function writeLauncher(home: string, runtime: string, relay: string): Promise<string> {
  const file = launcherPath(home);
  await privateFolder(rendezvousFolder(home));
  await privateFolder(path.dirname(file));
  const text = launcherText(runtime, relay);
  const now = await fs.readFile(file, 'utf8').catch(() => undefined);
  if (now !== text) {
    const temporary = `${file}.${process.pid}.tmp`;
    await fs.writeFile(temporary, text, { mode: 0o700 });
    await fs.rename(temporary, file);
  }
  return file;
}

/** Writes this window's record (0600), replacing it whole. */
export async function writeGatewayRecord(home: string, workspaceKey: string, record: GatewayRecord): Promise<string> {
  const file = gatewayRecordFile(home, workspaceKey);
  await privateFolder(rendezvousFolder(home));
  await privateFolder(path.dirname(file));
  const temporary = `${file}.${process.pid}.tmp`;
  await fs.writeFile(temporary, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  await fs.rename(temporary, file);
  return file;
}

/** Removes this window's record, if it is still this window's (another window of the workspace may have written its own since). */
export async function removeGatewayRecord(home: string, workspaceKey: string, token: string): Promise<void> {
  const file = gatewayRecordFile(home, workspaceKey);
  const record = await fs
    .readFile(file, 'utf8')
    .then((t) => JSON.parse(t) as Partial<GatewayRecord>)
    .catch(() => undefined);
  if (record?.token === token) await fs.unlink(file).catch(() => undefined);
}

/** Whether `child` is `parent` or lies under it. */
function within(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Whether a folder is the person's alone (theirs, and nobody else may write in it): only then is a record there believed. */
function isPrivate(folder: string): boolean {
  if (process.platform === 'win32') return true;
  try {
    const s = statSync(folder);
    return s.isDirectory() && (process.getuid === undefined || s.uid === process.getuid()) && (s.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/**
 * The records a relay started in `cwd` tries, in order: those of the windows whose folders hold
 * `cwd`, the deepest folder first; then, when `anyWindow` (a user-scope entry), the others, the last
 * written first. Records in a folder that is not the person's alone are ignored.
 */
export async function gatewayCandidates(home: string, cwd: string, anyWindow: boolean): Promise<GatewayRecord[]> {
  const folder = path.join(rendezvousFolder(home), 'gateways');
  if (!isPrivate(rendezvousFolder(home)) || !isPrivate(folder)) return [];
  const names = await fs.readdir(folder).catch(() => [] as string[]);
  const records = (
    await Promise.all(
      names
        .filter((n) => n.endsWith('.json'))
        .map((n) =>
          fs
            .readFile(path.join(folder, n), 'utf8')
            .then((t) => JSON.parse(t) as GatewayRecord)
            .catch(() => undefined),
        ),
    )
  ).filter(
    (r): r is GatewayRecord => r?.version === 1 && typeof r.address === 'string' && typeof r.token === 'string' && Array.isArray(r.folders),
  );
  const depth = (r: GatewayRecord): number => Math.max(-1, ...r.folders.filter((f) => within(cwd, f)).map((f) => f.length));
  const holding = records.filter((r) => depth(r) >= 0).sort((a, b) => depth(b) - depth(a) || b.written - a.written);
  const others = anyWindow ? records.filter((r) => depth(r) < 0).sort((a, b) => b.written - a.written) : [];
  return [...holding, ...others];
}
