/**
 * Writing MCP Host's entry into an agent's JSON (or JSON with comments) file, and taking it out
 * again, without touching anything else of the file: the text is edited where the entry goes, never
 * parsed and printed again, so other entries, comments, indentation and key order stay byte for byte
 * (jsonc-parser's `modify` formats the neighbours of what it inserts, which is why it is not used
 * here; its parser finds the places). Taking out is the exact inverse of putting in: an entry added
 * to a file that had none comes out leaving the file as it was, the `mcpServers` object MCP Host
 * added too, and a file MCP Host created is left empty for the caller to delete.
 */
import type { Node, ParseError } from 'jsonc-parser';
import { jsonc } from '../jsonc';

/** What a file is not, to hold an entry: not JSON, not an object, `mcpServers` not an object. */
export class EntryFileError extends Error {}

const CONTAINER = 'mcpServers';
/** A byte-order mark, which some editors on Windows put first: kept where it is, never read as part of the JSON. */
const BOM = '\uFEFF';

function tree(text: string): Node | undefined {
  if (!text.trim()) return undefined;
  const errors: ParseError[] = [];
  const { parseTree, printParseErrorCode } = jsonc();
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length) throw new EntryFileError(`not valid JSON: ${printParseErrorCode(errors[0].error)} at offset ${errors[0].offset}`);
  if (root?.type !== 'object') throw new EntryFileError('not a JSON object');
  return root;
}

function property(object: Node, key: string): Node | undefined {
  return object.children?.find((p) => p.children?.[0]?.value === key);
}

/** The whitespace at the start of the line `offset` is on. */
function indentAt(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

/** One level of the file's indentation: what its first indented line uses, else two spaces. */
function unitOf(text: string): string {
  const m = /\n([ \t]+)\S/.exec(text);
  return m ? (m[1].startsWith('\t') ? '\t' : m[1].length <= 8 ? m[1] : '  ') : '  ';
}

function eolOf(text: string): string {
  return text.includes('\r\n') ? '\r\n' : '\n';
}

/** A value as the file would write it at this depth. */
function printed(value: unknown, indent: string, unit: string, eol: string): string {
  return JSON.stringify(value, null, unit).replace(/\n/g, `${eol}${indent}`);
}

/** Where a new member goes after `last`: past a comment that ends its line, so the comment stays with it. */
function afterMember(text: string, last: Node): number {
  const end = last.offset + last.length;
  const rest = /^[ \t]*(\/\/[^\r\n]*|\/\*.*?\*\/[ \t]*)?/.exec(text.slice(end))!;
  return rest[1] ? end + rest[0].length : end;
}

/** The text and place of a new member `key: value` in `object`, and where its comma goes. */
function insertion(text: string, object: Node, key: string, value: unknown): { at: number; insert: string; comma?: number } {
  const unit = unitOf(text);
  const eol = eolOf(text);
  const members = object.children ?? [];
  const closing = object.offset + object.length - 1;
  const objectIndent = indentAt(text, object.offset);
  if (!members.length) {
    const indent = objectIndent + unit;
    return {
      at: object.offset + 1,
      insert: `${eol}${indent}${JSON.stringify(key)}: ${printed(value, indent, unit, eol)}${eol}${objectIndent}`,
    };
  }
  const last = members[members.length - 1];
  const sameLine = !text.slice(object.offset, last.offset).includes('\n');
  const tail = /^\s*,/.exec(text.slice(last.offset + last.length, closing));
  // A trailing comma the file already has after the last member is kept, as the separator, and the new member gets
  // one of its own: the file keeps its style, and taking the member out gives the file back as it was.
  const ownComma = tail ? ',' : '';
  if (sameLine) {
    const at = tail ? last.offset + last.length + tail[0].length : last.offset + last.length;
    return { at, insert: `${tail ? '' : ','} ${JSON.stringify(key)}: ${JSON.stringify(value)}${ownComma}` };
  }
  const indent = indentAt(text, last.offset);
  const at = tail ? afterMember(text, { ...last, length: last.length + tail[0].length } as Node) : afterMember(text, last);
  return {
    at,
    insert: `${eol}${indent}${JSON.stringify(key)}: ${printed(value, indent, unit, eol)}${ownComma}`,
    comma: tail ? undefined : last.offset + last.length,
  };
}

function apply(text: string, edit: { at: number; insert: string; comma?: number }): string {
  let out = text.slice(0, edit.at) + edit.insert + text.slice(edit.at);
  if (edit.comma !== undefined) out = `${out.slice(0, edit.comma)},${out.slice(edit.comma)}`;
  return out;
}

export interface EntryState {
  /** The entry as the file has it now, or undefined. */
  value: unknown;
}

/** The entry named `name` of the file's `mcpServers`, if any. */
export function readEntry(text: string, name: string): EntryState {
  if (text.startsWith(BOM)) return readEntry(text.slice(1), name);
  const root = tree(text);
  const container = root && property(root, CONTAINER)?.children?.[1];
  const entry = container?.type === 'object' ? property(container, name)?.children?.[1] : undefined;
  return {
    value: entry
      ? JSON.parse(text.slice(entry.offset, entry.offset + entry.length).replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, ''))
      : undefined,
  };
}

/** Whether the file has an `mcpServers` member (a comment that names it does not count). */
export function hasContainer(text: string): boolean {
  const root = tree(text.startsWith(BOM) ? text.slice(1) : text);
  return root !== undefined && property(root, CONTAINER) !== undefined;
}

/**
 * The file's text with `"name": value` in its `mcpServers` (added, with the object, when missing).
 * An entry of that name already there is an error: it is someone's, unless the caller checked it is MCP Host's.
 */
export function addEntry(text: string, name: string, value: unknown): string {
  if (text.startsWith(BOM)) return BOM + addEntry(text.slice(1), name, value);
  const root = tree(text);
  if (!root) {
    const eol = '\n';
    return `{${eol}  ${JSON.stringify(CONTAINER)}: {${eol}    ${JSON.stringify(name)}: ${printed(value, '    ', '  ', eol)}${eol}  }${eol}}${eol}`;
  }
  const containerProp = property(root, CONTAINER);
  if (!containerProp) return apply(text, insertion(text, root, CONTAINER, { [name]: value }));
  const container = containerProp.children?.[1];
  if (container?.type !== 'object') throw new EntryFileError(`"${CONTAINER}" is not an object`);
  if (property(container, name)) throw new EntryFileError(`it already has an entry named "${name}"`);
  return apply(text, insertion(text, container, name, value));
}

/**
 * The file's text without the entry `name` of its `mcpServers`, and without `mcpServers` when it is
 * left empty and MCP Host added it (`addedContainer`). Returns `''` for a file that held nothing
 * else and was created by MCP Host (`createdFile`), so the caller deletes it. The text unchanged
 * when there is no such entry.
 */
export function removeEntry(text: string, name: string, made: { addedContainer?: boolean; createdFile?: boolean } = {}): string {
  if (text.startsWith(BOM)) return BOM + removeEntry(text.slice(1), name, { addedContainer: made.addedContainer });
  const root = tree(text);
  const containerProp = root && property(root, CONTAINER);
  const container = containerProp?.children?.[1];
  if (!root || !containerProp || container?.type !== 'object') return text;
  const entry = property(container, name);
  if (!entry) return text;
  const alone = container.children!.length === 1;
  if (alone && (made.addedContainer || made.createdFile)) {
    if (made.createdFile && root.children!.length === 1) return '';
    return removeMember(text, root, containerProp);
  }
  return removeMember(text, container, entry);
}

/** Takes a member out of an object: the inverse of `insertion`. */
function removeMember(text: string, object: Node, member: Node): string {
  const members = object.children!;
  const index = members.indexOf(member);
  const closing = object.offset + object.length - 1;
  const end = member.offset + member.length;
  if (members.length === 1) {
    const before = text.slice(object.offset + 1, member.offset);
    const after = text.slice(end, closing);
    // What filling an empty object wrote: a line break and indentation before the member, and after it a line break
    // and the indentation of the object's own line; what the object held besides (`{ }`, a comment) stays.
    const opened = /^(\r?\n)[ \t]*$/.exec(before);
    const closedBy = opened && opened[1] + indentAt(text, object.offset);
    if (closedBy && after.startsWith(closedBy)) return text.slice(0, object.offset + 1) + text.slice(end + closedBy.length);
    // Only white space around it (what filling an empty object left): the object is `{}` again.
    if (!/\S/.test(before) && /^\s*,?\s*$/.test(after)) return text.slice(0, object.offset + 1) + text.slice(closing);
    const comma = /^[ \t]*,/.exec(after);
    return text.slice(0, member.offset) + text.slice(end + (comma ? comma[0].length : 0));
  }
  if (index === 0) return text.slice(0, member.offset) + text.slice(members[1].offset);
  const prevEnd = members[index - 1].offset + members[index - 1].length;
  const between = text.slice(prevEnd, member.offset);
  const commaAt = prevEnd + between.indexOf(',');
  const lineBreak = between.search(/\r?\n[ \t]*$/);
  // The last member with a trailing comma of its own (the file's style): it goes with that comma and the space or
  // line break before it; the previous member keeps its comma, which is the file's trailing comma again.
  if (index === members.length - 1 && text[end] === ',') {
    const start = lineBreak === -1 ? member.offset - /[ \t]*$/.exec(between)![0].length : prevEnd + lineBreak;
    return text.slice(0, start) + text.slice(end + 1);
  }
  // On one line: `prev, "k": v` loses `, "k": v`. Else the comma after the previous member, and the line from its break.
  if (lineBreak === -1) return text.slice(0, commaAt) + text.slice(end);
  return text.slice(0, commaAt) + text.slice(commaAt + 1, prevEnd + lineBreak) + text.slice(end);
}
