/**
 * Pinned definitions: a SHA-256 of the canonical JSON of what a server says of each tool, each
 * prompt and its instructions, so an approval (or a lock file) means "this exact definition" and a
 * server that changes a tool afterwards (a new description aimed at the model, a wider schema, a
 * `readOnlyHint` on a tool that deletes) is found out. Pure functions: the editor keeps its pins in
 * its storage, the CLI in a lock file, both compare with these.
 */
import { createHash } from 'node:crypto';
import { toolUi } from '../apps/toolUi';
import type { Prompt, Tool } from '../protocol/types';
import { stableStringify } from '../protocol/stableStringify';

/** The version of the lock file format `lockFileText` writes and `parseLockFile` reads. */
export const LOCK_FILE_VERSION = 1;

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

/** A definition and the SHA-256 (hex) of its canonical JSON. */
export interface Pinned<T = unknown> {
  sha256: string;
  definition: T;
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

/** The SHA-256 (hex) of a value's canonical JSON (sorted keys, undefined members left out). */
export function definitionHash(definition: unknown): string {
  return createHash('sha256').update(stableStringify(definition)).digest('hex');
}

function pinned<T>(definition: T): Pinned<T> {
  return { sha256: definitionHash(definition), definition };
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

/** Everything a server offers, pinned. */
export function pinSet(offered: { tools: readonly Tool[]; prompts: readonly Prompt[]; instructions?: string }): PinSet {
  return {
    tools: Object.fromEntries(offered.tools.map((t) => [t.name, pinTool(t)])),
    prompts: Object.fromEntries(offered.prompts.map((p) => [p.name, pinPrompt(p)])),
    instructions: pinInstructions(offered.instructions),
  };
}

/** Which members of two definitions differ; the whole value (`definition`) when either is not an object. */
function changedMembers(before: unknown, after: unknown): string[] {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(before) || !isObject(after)) return ['definition'];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.filter((k) => stableStringify(before[k]) !== stableStringify(after[k]));
}

/** One item against its pin: same, changed (and which members), new (no pin) or removed (pinned, no longer offered). */
export function compareOne(pin: Pinned | undefined, now: Pinned | undefined): PinStatus {
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
};

/** What changed, for a person: "description, input schema". */
export function describeChange(changed: readonly string[]): string {
  return changed.map((m) => MEMBER_NAMES[m] ?? m).join(', ');
}

/** The pin of a tool by name in a set, if it has one. */
export function pinOf(pins: PinSet, kind: 'tools' | 'prompts', name: string): Pinned | undefined {
  return own<Pinned>(pins[kind], name);
}

/** The lock file's text: sorted keys, two-space indents, one trailing newline, so a diff in a pull request shows only what changed. */
export function lockFileText(pins: PinSet): string {
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
  // A definition edited without its hash (or the other way round) is not a pin of anything.
  if (definitionHash(definition) !== sha256) throw new LockFileError(`${where}.sha256 is not the hash of its definition`);
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

/** Reads a lock file; a `LockFileError` says what is wrong with it. */
export function parseLockFile(text: string): PinSet {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new LockFileError(`not JSON: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LockFileError('not a JSON object');
  const file = value as Record<string, unknown>;
  if (file.version !== LOCK_FILE_VERSION) throw new LockFileError(`version ${JSON.stringify(file.version)} is not ${LOCK_FILE_VERSION}`);
  return {
    tools: readMap(file.tools, 'tools') as PinSet['tools'],
    prompts: readMap(file.prompts, 'prompts') as PinSet['prompts'],
    instructions: readPinned(file.instructions, 'instructions', (d) => d === null || typeof d === 'string') as PinSet['instructions'],
  };
}
