/**
 * Pinned definitions: a SHA-256 of the canonical JSON of what a server says of each tool, each
 * prompt and its instructions, so an approval (or a lock file) means "this exact definition" and a
 * server that changes a tool afterwards (a new description aimed at the model, a wider schema, a
 * `readOnlyHint` on a tool that deletes) is found out. Pure functions: the editor keeps its pins in
 * its storage, the CLI in a lock file, both compare with these.
 *
 * Some definitions cannot be pinned, and compare as changed whatever was pinned: one holding a
 * number JSON cannot carry (`1e999` is read as Infinity, and its canonical JSON would be that of
 * `-1e999` and of null), and a name a listing gives more than one definition (the server decides
 * which runs: no one definition can be checked).
 */
import { createHash } from 'node:crypto';
import { toolUi } from '../apps/toolUi';
import { jsonc } from '../jsonc';
import type { Prompt, Tool } from '../protocol/types';
import { canonicalJson, NonFiniteNumberError, stableStringify } from '../protocol/stableStringify';
import type { ScanFinding } from '../scan/detectors';
import type { AuditedServer, AuditEntry } from './types';

/** The version of the lock file format `lockFileText` writes and `parseLockFile` reads. */
export const LOCK_FILE_VERSION = 1;
/** The largest lock file `pin` writes and `--pinned` and the editor read (a server's whole listing is a few hundred KB). */
export const MAX_LOCK_FILE_BYTES = 8 * 1024 * 1024;

/** The members of a tool's definition a pin covers; anything else the server sends (icons, other `_meta`) is not pinned. */
export interface ToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
  /** `execution` (task support). */
  execution?: unknown;
  /** The MCP Apps link of `_meta.ui` (or `_meta["ui/resourceUri"]`), defaults filled in: its `ui://` resource and who may call it. */
  ui: { resourceUri?: string; visibility: string[] };
}

export interface PromptDefinition {
  name: string;
  title?: string;
  description?: string;
  arguments?: unknown;
}

/** Why a definition cannot be pinned: a number JSON cannot carry in it, nesting too deep to hash, or its name listed with several definitions. */
export type Unpinnable = 'nonFiniteNumber' | 'tooDeep' | 'sameName';

/** A definition and the SHA-256 (hex) of its canonical JSON. */
export interface Pinned<T = unknown> {
  sha256: string;
  definition: T;
  /**
   * Set when the definition cannot be pinned: it then compares as changed with any pin, is never
   * pinned, and `sha256` only tells it apart. For `sameName`, `definition` lists every definition
   * of the name, in the listing's order.
   */
  unpinnable?: Unpinnable;
}

/** What a server offers, pinned: by tool name, by prompt name, and its instructions (`null` when it sends none). */
export interface PinSet {
  tools: Record<string, Pinned<ToolDefinition>>;
  prompts: Record<string, Pinned<PromptDefinition>>;
  instructions: Pinned<string | null>;
}

/** How an item compares with its pin; `changed` lists the members that differ (`description`, `inputSchema`, …). */
export type PinStatus = { status: 'same' } | { status: 'changed'; changed: string[] } | { status: 'new' } | { status: 'removed' };

export interface PinComparison {
  tools: Record<string, PinStatus>;
  prompts: Record<string, PinStatus>;
  instructions: PinStatus;
}

/** The SHA-256 (hex) of a value's canonical JSON (sorted keys, undefined members left out); a `NonFiniteNumberError` for 1e999. */
export function definitionHash(definition: unknown): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex');
}

/** A hash that tells an unpinnable definition apart (for the audit and the review), in a domain no canonical hash shares. */
function unpinnableHash(why: Unpinnable, text: string): string {
  return createHash('sha256').update(`mcp-host unpinnable ${why}\u0000${text}`).digest('hex');
}

function pinned<T>(definition: T): Pinned<T> {
  try {
    return { sha256: definitionHash(definition), definition };
  } catch (error) {
    // Nested past the stack (a server's schema thousands of levels deep): no canonical JSON, one hash for all of them.
    if (error instanceof RangeError) return { sha256: unpinnableHash('tooDeep', ''), definition, unpinnable: 'tooDeep' };
    if (!(error instanceof NonFiniteNumberError)) throw error;
    // What the number was is kept apart from null (and Infinity from -Infinity) in the text hashed.
    const text = JSON.stringify(definition, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? `\u0000${v}` : v));
    return { sha256: unpinnableHash('nonFiniteNumber', text), definition, unpinnable: 'nonFiniteNumber' };
  }
}

/** The pinned members of a tool, in canonical form (undefined members dropped by the hash). */
export function toolDefinition(tool: Tool): ToolDefinition {
  const definition: ToolDefinition = { name: tool.name, inputSchema: tool.inputSchema, ui: toolUi(tool) };
  if (tool.title !== undefined) definition.title = tool.title;
  if (tool.description !== undefined) definition.description = tool.description;
  if (tool.outputSchema !== undefined) definition.outputSchema = tool.outputSchema;
  if (tool.annotations !== undefined) definition.annotations = tool.annotations;
  if (tool.execution !== undefined) definition.execution = tool.execution;
  return definition;
}

export function promptDefinition(prompt: Prompt): PromptDefinition {
  const definition: PromptDefinition = { name: prompt.name };
  if (prompt.title !== undefined) definition.title = prompt.title;
  if (prompt.description !== undefined) definition.description = prompt.description;
  if (prompt.arguments !== undefined) definition.arguments = prompt.arguments;
  return definition;
}

/**
 * Pins of listed tools and prompts, by the object the server's list gave: a gated call checks its
 * tool's pin and the audit records its hash, on every call, and a listed definition is never changed
 * in place (a new list brings new objects).
 */
const toolPins = new WeakMap<Tool, Pinned<ToolDefinition>>();
const promptPins = new WeakMap<Prompt, Pinned<PromptDefinition>>();

export function pinTool(tool: Tool): Pinned<ToolDefinition> {
  let pin = toolPins.get(tool);
  if (!pin) toolPins.set(tool, (pin = pinned(toolDefinition(tool))));
  return pin;
}

export function pinPrompt(prompt: Prompt): Pinned<PromptDefinition> {
  let pin = promptPins.get(prompt);
  if (!pin) promptPins.set(prompt, (pin = pinned(promptDefinition(prompt))));
  return pin;
}
export const pinInstructions = (instructions: string | undefined): Pinned<string | null> => pinned(instructions ?? null);

/** The hash of the definition a tool call runs under (the audit's `tool.definition`). */
export function toolDefinitionHash(tool: Tool): string {
  return pinTool(tool).sha256;
}

/** A listing's items by name, made once per listing (a new listing is a new array): the tree asks for each of its items. */
const listingsByName = new WeakMap<readonly object[], { length: number; byName: Map<string, object[]> }>();

function sameNamed<T extends { name: string }>(listing: readonly T[], name: string): T[] {
  let known = listingsByName.get(listing);
  if (known?.length !== listing.length) {
    const byName = new Map<string, object[]>();
    for (const item of listing) {
      const named = byName.get(item.name);
      if (named) named.push(item);
      else byName.set(item.name, [item]);
    }
    listingsByName.set(listing, (known = { length: listing.length, byName }));
  }
  return (known.byName.get(name) ?? []) as T[];
}

/**
 * The pin of what a listing says of `item`'s name: `item`'s own, or, when the listing gives that
 * name more than one definition, one unpinnable `sameName` pin of all of them (whichever the item).
 */
export function pinListed<T extends Tool | Prompt>(item: T, listing: readonly T[], pinOfItem: (item: T) => Pinned): Pinned {
  const named = sameNamed(listing, item.name).map(pinOfItem);
  const distinct = [...new Map(named.map((p) => [p.sha256, p])).values()];
  if (distinct.length < 2) return pinOfItem(item);
  return {
    sha256: unpinnableHash('sameName', distinct.map((p) => p.sha256).join(',')),
    definition: distinct.map((p) => p.definition),
    unpinnable: 'sameName',
  };
}

/** Each name of a listing with its pin (`pinListed`): a name listed with several definitions has one unpinnable pin. */
function pinMap<T extends Tool | Prompt>(listing: readonly T[], pinOfItem: (item: T) => Pinned): Record<string, Pinned> {
  const out: Record<string, Pinned> = Object.create(null) as Record<string, Pinned>;
  for (const item of listing) out[item.name] ??= pinListed(item, listing, pinOfItem);
  return out;
}

/** Everything a server offers, pinned; a name listed twice with different definitions is unpinnable (see `pinListed`). */
export function pinSet(offered: { tools: readonly Tool[]; prompts: readonly Prompt[]; instructions?: string }): PinSet {
  return {
    tools: pinMap(offered.tools, pinTool) as PinSet['tools'],
    prompts: pinMap(offered.prompts, pinPrompt) as PinSet['prompts'],
    instructions: pinInstructions(offered.instructions),
  };
}

/** The tools and prompts of a set that cannot be pinned, and why: what `pin` refuses to write. */
export function unpinnableIn(pins: PinSet): Array<{ kind: 'tools' | 'prompts'; name: string; why: Unpinnable }> {
  return (['tools', 'prompts'] as const).flatMap((kind) =>
    Object.entries(pins[kind] as Record<string, Pinned>).flatMap(([name, p]) => (p.unpinnable ? [{ kind, name, why: p.unpinnable }] : [])),
  );
}

/** Which members of two definitions differ; the whole value (`definition`) when either is not an object. */
function changedMembers(before: unknown, after: unknown): string[] {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(before) || !isObject(after)) return ['definition'];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.filter((k) => stableStringify(before[k]) !== stableStringify(after[k]));
}

/**
 * One item against its pin: same, changed (and which members), new (no pin) or removed (pinned, no
 * longer offered). A definition that cannot be pinned is changed, pinned or not, and says why.
 */
export function compareOne(pin: Pinned | undefined, now: Pinned | undefined): PinStatus {
  if (now?.unpinnable) return { status: 'changed', changed: [now.unpinnable] };
  if (!pin && !now) return { status: 'same' };
  if (!pin) return { status: 'new' };
  if (!now) return { status: 'removed' };
  if (pin.sha256 === now.sha256) return { status: 'same' };
  const changed = changedMembers(pin.definition, now.definition);
  return { status: 'changed', changed: changed.length ? changed : ['definition'] };
}

function compareMap(pins: Record<string, Pinned>, now: Record<string, Pinned>): Record<string, PinStatus> {
  const names = [...new Set([...Object.keys(pins), ...Object.keys(now)])].sort();
  return Object.fromEntries(names.map((n) => [n, compareOne(own(pins, n), own(now, n))]));
}

/** A member of a record that is its own, never one of `Object.prototype` (a tool named `constructor`). */
function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
}

export function comparePins(pins: PinSet, now: PinSet): PinComparison {
  return {
    tools: compareMap(pins.tools, now.tools),
    prompts: compareMap(pins.prompts, now.prompts),
    instructions: compareOne(pins.instructions, now.instructions),
  };
}

const MEMBER_NAMES: Record<string, string> = {
  inputSchema: 'input schema',
  outputSchema: 'output schema',
  execution: 'task support',
  ui: 'app link (_meta.ui)',
  nonFiniteNumber: 'a number JSON cannot carry, such as 1e999',
  tooDeep: 'nested too deeply to be hashed',
  sameName: 'listed more than once, with different definitions',
} satisfies Record<Unpinnable, string> & Record<string, string>;

/** What changed, for a person: "description, input schema". */
export function describeChange(changed: readonly string[]): string {
  return changed.map((m) => MEMBER_NAMES[m] ?? m).join(', ');
}

/**
 * The audit record of a definition (origin `server`, nothing sent): found changed since its pin, or
 * flagged by the scan on first sight; or (origin `person`) the person accepting it.
 */
export function definitionRecord(
  kind: 'definition-changed' | 'definition-accepted' | 'definition-flagged',
  server: AuditedServer,
  c: {
    kind: 'tools' | 'prompts' | 'instructions';
    name: string;
    pinned?: string;
    now: string;
    changed: string[];
    findings?: readonly ScanFinding[];
  },
): AuditEntry {
  return {
    kind,
    time: new Date().toISOString(),
    origin: kind === 'definition-accepted' ? 'person' : 'server',
    server,
    method: c.kind === 'tools' ? 'tools/call' : c.kind === 'prompts' ? 'prompts/get' : 'initialize',
    name: c.name,
    decision: kind === 'definition-accepted' ? 'asked-allowed' : 'refused',
    outcome: { kind: 'not-sent' },
    ms: 0,
    definition: { ...(c.pinned !== undefined && { pinned: c.pinned }), now: c.now, changed: c.changed },
    ...(c.findings && { findings: c.findings.map((f) => ({ detector: f.detector, pointer: f.pointer, text: f.text })) }),
  };
}

/** The pin of a tool by name in a set, if it has one. */
export function pinOf(pins: PinSet, kind: 'tools' | 'prompts', name: string): Pinned | undefined {
  return own<Pinned>(pins[kind], name);
}

/**
 * The lock file's text: sorted keys, two-space indents, one trailing newline, so a diff in a pull
 * request shows only what changed. A set with an unpinnable definition (`unpinnableIn`) has none.
 */
export function lockFileText(pins: PinSet): string {
  const unpinnable = unpinnableIn(pins);
  if (unpinnable.length)
    throw new LockFileError(
      `cannot pin ${unpinnable.map((u) => `${u.kind === 'tools' ? 'the tool' : 'the prompt'} ${u.name} (${describeChange([u.why])})`).join(', ')}`,
    );
  const sorted = JSON.parse(stableStringify({ version: LOCK_FILE_VERSION, ...pins })) as unknown;
  return `${JSON.stringify(sorted, null, 2)}\n`;
}

/** Why a lock file cannot be read as one. */
export class LockFileError extends Error {}

const HEX64 = /^[0-9a-f]{64}$/;

function readPinned(value: unknown, where: string, isDefinition: (d: unknown) => boolean): Pinned {
  if (typeof value !== 'object' || value === null) throw new LockFileError(`${where} is not an object`);
  const { sha256, definition } = value as Record<string, unknown>;
  if (typeof sha256 !== 'string' || !HEX64.test(sha256)) throw new LockFileError(`${where}.sha256 is not a SHA-256 in hex`);
  if (!isDefinition(definition)) throw new LockFileError(`${where}.definition is missing or of the wrong type`);
  const pin = pinned(definition);
  if (pin.unpinnable) throw new LockFileError(`${where}.definition cannot be pinned: ${describeChange([pin.unpinnable])}`);
  // A definition edited without its hash (or the other way round) is not a pin of anything.
  if (pin.sha256 !== sha256) throw new LockFileError(`${where}.sha256 is not the hash of its definition`);
  return { sha256, definition };
}

function readMap(value: unknown, where: string): Record<string, Pinned> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LockFileError(`${where} is not an object`);
  const out: Record<string, Pinned> = Object.create(null) as Record<string, Pinned>;
  for (const [name, item] of Object.entries(value)) {
    const pin = readPinned(item, `${where}.${name}`, (d) => typeof d === 'object' && d !== null && (d as { name?: unknown }).name === name);
    out[name] = pin;
  }
  return out;
}

/**
 * The first member an object of `text` names twice, as a JSON pointer: JSON.parse would keep the
 * last silently, so a second `"tools"` (or a second entry of one tool) could hide below the first.
 */
function duplicateKey(text: string): string | undefined {
  const token = (p: string | number) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`;
  const objects: Array<{ keys: Set<string>; at: string }> = [];
  let found: string | undefined;
  jsonc().visit(text, {
    onObjectBegin: (_offset, _length, _line, _character, pathSupplier) =>
      void objects.push({ keys: new Set(), at: pathSupplier().map(token).join('') }),
    onObjectProperty: (property) => {
      const top = objects[objects.length - 1];
      if (top.keys.has(property)) found ??= `${top.at}${token(property)}`;
      top.keys.add(property);
    },
    onObjectEnd: () => void objects.pop(),
  });
  return found;
}

/** Reads a lock file; a `LockFileError` says what is wrong with it. */
export function parseLockFile(text: string): PinSet {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new LockFileError(`not JSON: ${(e as Error).message}`);
  }
  let twice: string | undefined;
  try {
    twice = duplicateKey(text);
  } catch (error) {
    // JSON.parse reads any depth; the visitor (and hashing) recurse: nothing a lock file `pin` wrote nests this deep.
    if (error instanceof RangeError) throw new LockFileError('nested too deeply to be read');
    throw error;
  }
  if (twice !== undefined) throw new LockFileError(`${twice} is named twice: JSON would keep the last one unseen, so the file is not read`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LockFileError('not a JSON object');
  const file = value as Record<string, unknown>;
  if (file.version !== LOCK_FILE_VERSION) throw new LockFileError(`version ${JSON.stringify(file.version)} is not ${LOCK_FILE_VERSION}`);
  return {
    tools: readMap(file.tools, 'tools') as PinSet['tools'],
    prompts: readMap(file.prompts, 'prompts') as PinSet['prompts'],
    instructions: readPinned(file.instructions, 'instructions', (d) => d === null || typeof d === 'string') as PinSet['instructions'],
  };
}
