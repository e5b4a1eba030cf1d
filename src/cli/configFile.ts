/**
 * `--config FILE`, read the same way by every verb that takes it (`serve`, `scan`): the file's text
 * through ../core/servers/configFile.ts (VS Code's `servers` or the agents' `mcpServers`, MCP Host's
 * own entry keys kept, the other clients' keys mapped, variables resolved, the line of each entry
 * for SARIF). `${workspaceFolder}` is the first `--root` when there is one, else the file's folder
 * (the one above `.vscode` for `.vscode/mcp.json`): what the file means does not depend on where
 * the command was started. A file that cannot be read as one is a `ConfigFileError` naming it; an
 * entry that cannot be used is a problem naming it, and each verb says what that costs
 * (`serve` exits 2 before anything starts, `scan` scans the others and exits 3).
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { ConfigFileError, parseConfigFile, type ConfigFile } from '../core/servers/configFile';

export { ConfigFileError, type ConfigFile };

/** What a configuration file is read with: the first `--root`, the current folder, the environment. */
export interface ConfigReading {
  root?: string;
  cwd: string;
  env: Record<string, string | undefined>;
}

/** What `${workspaceFolder}` means in the file: the first `--root`, else the file's folder, or the one above `.vscode`. */
export function workspaceFolderOf(file: string, reading: Pick<ConfigReading, 'root' | 'cwd'>): string {
  if (reading.root !== undefined) return path.resolve(reading.cwd, reading.root);
  const folder = path.dirname(path.resolve(reading.cwd, file));
  return path.basename(folder) === '.vscode' ? path.dirname(folder) : folder;
}

/** Reads and parses the file; a `ConfigFileError` naming it (`--config FILE: …`) when it cannot be used at all. */
export function readConfigFile(file: string, reading: ConfigReading): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path.resolve(reading.cwd, file), 'utf8');
  } catch (error) {
    throw new ConfigFileError(`--config ${file}: ${(error as Error).message}`);
  }
  try {
    return parseConfigFile(text, { folder: workspaceFolderOf(file, reading), home: homedir(), env: reading.env });
  } catch (error) {
    if (error instanceof ConfigFileError) throw new ConfigFileError(`--config ${file}: ${error.message}`);
    throw error;
  }
}

/** One line per entry that cannot be used, naming the file and the entry. */
export function entryProblems(file: string, config: ConfigFile): string[] {
  return config.problems.map((p) => `--config ${file}: server "${p.name}": ${p.message}`);
}
