/**
 * Codex's `config.toml`: MCP Host's `[mcp_servers.mcp-host]` table added at the end of the file, as
 * a block that starts with a comment saying who wrote it, and taken out again by that comment, so
 * the rest of the file (its comments, its layout, its other tables) stays byte for byte. The file
 * is parsed (smol-toml) only to check it: before (a file that is not TOML is not touched) and after
 * (the result must hold exactly the table written).
 */
import { parse } from 'smol-toml';
import { EntryFileError } from './jsonEntry';

/** The first line of the block MCP Host writes; Disconnect finds the block by it. */
export const TOML_MARKER = '# Written by MCP Host (Connect an Agent); MCP Host: Disconnect an Agent removes this table.';

function parsed(text: string, what: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new EntryFileError(`${what} is not valid TOML: ${(error as Error).message.split('\n')[0]}`);
  }
}

function tableOf(doc: Record<string, unknown>, name: string): unknown {
  const servers = doc.mcp_servers;
  return typeof servers === 'object' && servers !== null ? (servers as Record<string, unknown>)[name] : undefined;
}

/** The TOML key of a table name: bare when it can be, quoted otherwise. */
function key(name: string): string {
  return /^[A-Za-z0-9_-]+$/.test(name) ? name : JSON.stringify(name);
}

/** The entry `name` of `[mcp_servers]` as the file has it, if any. */
export function readTomlEntry(text: string, name: string): unknown {
  return tableOf(parsed(text, 'the file'), name);
}

/** The file's text with the block for `[mcp_servers.NAME]` at its end. */
export function addTomlEntry(text: string, name: string, value: { command: string; args: string[] }): string {
  if (tableOf(parsed(text, 'the file'), name) !== undefined) throw new EntryFileError(`it already has a table [mcp_servers.${name}]`);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const block = [
    TOML_MARKER,
    `[mcp_servers.${key(name)}]`,
    `command = ${JSON.stringify(value.command)}`,
    `args = [${value.args.map((a) => JSON.stringify(a)).join(', ')}]`,
    '',
  ].join(eol);
  // One line break after the file: a blank line before the block when the file ends its last line, the end of that
  // line when it does not. Disconnect takes exactly that line break out again, so the file keeps its own ending.
  const separator = text === '' ? '' : eol;
  const out = text + separator + block;
  const written = tableOf(parsed(out, 'the result'), name) as { command?: unknown; args?: unknown } | undefined;
  if (written?.command !== value.command || JSON.stringify(written.args) !== JSON.stringify(value.args))
    throw new EntryFileError(`the table written does not read back as [mcp_servers.${name}]`);
  return out;
}

/** The file's text without MCP Host's block (found by its marker); unchanged when there is none. */
export function removeTomlEntry(text: string, name: string): string {
  const lines = text.split(/(?<=\n)/);
  const start = lines.findIndex((line, i) => line.trimEnd() === TOML_MARKER && lines[i + 1]?.trim() === `[mcp_servers.${key(name)}]`);
  if (start === -1) return text;
  let end = start + 2;
  // The table's lines: up to the next table header, a blank line or the end.
  while (end < lines.length && lines[end].trim() !== '' && !/^\s*\[/.test(lines[end])) end++;
  const before = lines.slice(0, start).join('');
  const after = lines.slice(end).join('');
  // The line break written before the block goes with it, unless what was added after the block since would then
  // join the file's last line (the file had no final line break, and the addition starts on the block's next line).
  const out = after === '' || /^\r?\n/.test(after) ? before.replace(/\r?\n$/, '') + after : before + after;
  parsed(out, 'the result');
  return out;
}
