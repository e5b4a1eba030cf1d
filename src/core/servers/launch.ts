import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseDotenv } from 'dotenv';
import { McpError } from '../protocol/errors';
import type { Root } from '../protocol/types';
import type { StdioServerParams } from '../transport/stdio';
import type { ServerDefinition, StdioServerDefinition } from './definition';

/** Process parameters for a stdio definition whose variables are already resolved. */
export async function stdioParamsFor(def: StdioServerDefinition, defaultCwd?: string): Promise<StdioServerParams> {
  const cwd = def.cwd ?? defaultCwd;
  let fileEnv: Record<string, string> = {};
  if (def.envFile) {
    const file = path.resolve(cwd ?? process.cwd(), def.envFile);
    try {
      fileEnv = parseDotenv(await readFile(file, 'utf8'));
    } catch (e) {
      throw McpError.invalidParams(`${def.name}: cannot read envFile ${file}: ${(e as Error).message}`);
    }
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
