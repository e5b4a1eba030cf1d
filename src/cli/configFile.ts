/**
 * `--config FILE`: the servers of an `mcp.json`-style file (VS Code's `servers`, or the
 * `mcpServers` of Claude Desktop, Cursor and the agents), read the way Import Servers reads them
 * (../core/servers/import.ts), with MCP Host's own entry keys (`tools`, `autoApprove`,
 * `flowLabels`, …) kept where an entry has them, then parsed as settings entries are. Small and
 * pure so every verb that takes `--config` shares it.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { jsonc } from '../core/jsonc';
import { isObject } from '../core/protocol/classify';
import { definitionProblem, parseServerDefinitions, type ServerDefinition } from '../core/servers/definition';
import { parseImportFile } from '../core/servers/import';
import { SERVER_ENTRY_SCHEMA } from '../core/servers/schema';
import { resolveVariables } from '../core/servers/variables';

export interface ConfiguredServers {
  /** The servers, variables resolved (`${workspaceFolder}` is the file's folder, or the one above `.vscode`). */
  definitions: ServerDefinition[];
  /** An entry that cannot be used, with why: the others are still used. */
  problems: Array<{ name: string; message: string }>;
  /** The line (from 1) of each server's entry in the file, for a SARIF location. */
  lines: Record<string, number>;
}

/** MCP Host's own keys of an entry, which a foreign file's mapping does not carry. */
const OWN_KEYS = new Set(Object.keys(SERVER_ENTRY_SCHEMA.oneOf[0].properties).concat(Object.keys(SERVER_ENTRY_SCHEMA.oneOf[1].properties)));

/** Reads the servers of a configuration file's text; an error message when the file as a whole cannot be used. */
export async function configuredServers(
  text: string,
  file: string,
  env: Record<string, string | undefined> = process.env,
): Promise<ConfiguredServers | string> {
  const parsed = parseImportFile(text, file, definitionProblem);
  if (parsed.error) return `${file}: ${parsed.error}`;
  const raw = jsonc().parse(text, [], { allowTrailingComma: true }) as Record<string, unknown>;
  const rawEntries = { ...(isObject(raw.mcpServers) ? raw.mcpServers : {}), ...(isObject(raw.servers) ? raw.servers : {}) };
  const problems: ConfiguredServers['problems'] = [];
  const entries: Record<string, Record<string, unknown>> = {};
  for (const c of parsed.candidates) {
    const own = rawEntries[c.name];
    const kept = isObject(own) ? Object.fromEntries(Object.entries(own).filter(([k]) => OWN_KEYS.has(k) && !(k in c.entry))) : {};
    const entry = { ...c.entry, ...kept };
    const problem = definitionProblem(c.name, entry);
    if (problem) problems.push({ name: c.name, message: problem });
    else entries[c.name] = entry;
  }
  const { definitions, diagnostics } = parseServerDefinitions(entries, { scope: 'user' });
  for (const d of diagnostics) problems.push({ name: d.name, message: d.message });
  const folder = path.dirname(path.resolve(file));
  const workspaceFolder = path.basename(folder) === '.vscode' ? path.dirname(folder) : folder;
  const resolved: ServerDefinition[] = [];
  for (const def of definitions) {
    try {
      resolved.push(await resolveVariables(def, { workspaceFolder, userHome: os.homedir(), env }));
    } catch (error) {
      problems.push({ name: def.name, message: (error as Error).message });
    }
  }
  return { definitions: resolved, problems, lines: entryLines(text, Object.keys(entries)) };
}

/** The line of each name's first `"name":` in the text (1 when it cannot be found). */
function entryLines(text: string, names: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of names) {
    const at = text.indexOf(`${JSON.stringify(name)}`);
    out[name] = at < 0 ? 1 : text.slice(0, at).split('\n').length;
  }
  return out;
}
