import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseDotenv } from 'dotenv';
import { McpError } from '../protocol/errors';
import type { Root } from '../protocol/types';
import type { StdioServerParams } from '../transport/stdio';
import type { ServerDefinition, StdioServerDefinition } from './definition';
import { resolveVariables } from './variables';

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

/**
 * What a stdio definition's `envFile` holds, as a digest the launch consent covers (with the
 * launch hash, which has only its path): `missing` where it cannot be read, `unresolved` where its
 * path needs a secret (`${input:…}`); undefined without one. `defaultCwd` as for stdioParamsFor.
 */
export async function envFileDigest(def: ServerDefinition, defaultCwd?: string): Promise<string | undefined> {
  if (def.type !== 'stdio' || def.envFile === undefined) return undefined;
  let resolved: ServerDefinition;
  try {
    resolved = await resolveVariables(def, { workspaceFolder: defaultCwd, userHome: os.homedir(), env: process.env });
  } catch {
    return 'unresolved';
  }
  if (resolved.type !== 'stdio' || resolved.envFile === undefined) return undefined;
  try {
    return digest(await readFile(path.resolve(resolved.cwd ?? defaultCwd ?? process.cwd(), resolved.envFile), 'utf8'));
  } catch {
    return 'missing';
  }
}

/**
 * Process parameters for a stdio definition whose variables are already resolved. `consented`:
 * the envFileDigest the person's answer covered; a file that holds something else now is refused.
 */
export async function stdioParamsFor(def: StdioServerDefinition, defaultCwd?: string, consented?: string): Promise<StdioServerParams> {
  const cwd = def.cwd ?? defaultCwd;
  let fileEnv: Record<string, string> = {};
  if (def.envFile) {
    const file = path.resolve(cwd ?? process.cwd(), def.envFile);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      throw McpError.invalidParams(`${def.name}: cannot read envFile ${file}: ${(e as Error).message}`);
    }
    if (consented !== undefined && consented !== 'unresolved' && digest(text) !== consented)
      throw McpError.invalidRequest(`${def.name}: its envFile ${file} changed after you allowed it to start; start it again to be asked`);
    fileEnv = parseDotenv(text);
  }
  // Explicit env wins over the file.
  return { command: def.command, args: def.args, cwd, env: { ...fileEnv, ...def.env } };
}

/** The workspace roots plus the server's own extra roots (paths or file URIs). */
export function rootsFor(def: ServerDefinition, workspaceRoots: Root[], baseDir?: string): Root[] {
  const extra = def.roots.map((r): Root => {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(r)) return { uri: r };
    const abs = path.resolve(baseDir ?? process.cwd(), r);
    return { uri: pathToFileURL(abs).href, name: path.basename(abs) };
  });
  const seen = new Set<string>();
  return [...workspaceRoots, ...extra].filter((r) => !seen.has(r.uri) && seen.add(r.uri));
}
