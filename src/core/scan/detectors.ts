/**
 * Poisoned definitions, found on first sight: offline, deterministic detectors over everything a
 * server says of itself that a model reads (each tool's name, title, description and input and
 * output schemas with every property's description, each prompt and its arguments, the server's
 * instructions). What they look for is what tool-poisoning attacks use: text the person cannot see,
 * instructions addressed to the model, other servers' tools, files no tool has business with,
 * parameters that ask the model for such things, and descriptions too long to be read. Every
 * finding names its detector, the text (made visible) and where it sits (a JSON pointer into the
 * definition). False positives decide whether anyone keeps a scanner on: test/core/scan.test.ts
 * keeps the official servers clean.
 */
import type { Prompt, Tool } from '../protocol/types';
import { invisibleMarked, invisibleRuns } from './invisible';

export type Detector =
  | 'invisible-characters'
  | 'model-instructions'
  | 'other-servers-tools'
  | 'sensitive-files'
  | 'soliciting-parameter'
  | 'outsized-description';

/** Every detector, with what it means for a person (the CLI's SARIF rules, the docs). */
export const DETECTORS: Readonly<Record<Detector, string>> = {
  'invisible-characters':
    'Text a person cannot see but a model reads: Unicode tag characters, zero-width or bidirectional controls, ANSI escapes',
  'model-instructions':
    'Instructions addressed to the model rather than a description of the tool ("ignore previous", "do not tell the user", <IMPORTANT>)',
  'other-servers-tools': "A reference to another server's tools: a definition that rewrites how other tools are used (shadowing)",
  'sensitive-files': 'A reference to files a tool has no business with: SSH keys, .env files, cloud credentials, MCP configurations',
  'soliciting-parameter': 'A parameter that asks the model to pass secrets, files or the conversation',
  'outsized-description': 'A description too long for a person to read before approving it',
};

/** What a finding is in: a tool, a prompt, or the server's instructions. */
export type ScannedKind = 'tool' | 'prompt' | 'instructions';

export interface ScanFinding {
  detector: Detector;
  kind: ScannedKind;
  /** The tool's or prompt's name; `instructions` for the instructions. */
  name: string;
  /** Where in the definition, as a JSON pointer (`/description`, `/inputSchema/properties/path/description`); `''` for the instructions' text. */
  pointer: string;
  /** The text found, with invisible characters made visible and cut to a readable length. */
  text: string;
}

/** A finding as a suspended definition's changed member reads ("flagged: model-instructions at /description: <IMPORTANT>"). */
export const flaggedMember = (f: ScanFinding): string => `${FLAGGED}${f.detector} at ${f.pointer}: ${f.text}`;
const FLAGGED = 'flagged: ';
/** Whether a changed member is a finding of the scan rather than a change since the pin. */
export const isFlaggedMember = (member: string): boolean => member.startsWith(FLAGGED);

/** What a server offers, as listed. */
export interface Offered {
  tools: readonly Tool[];
  prompts: readonly Prompt[];
  instructions?: string;
}

export interface ScanContext {
  /** The tool names of the other servers scanned with this one (the editor's running servers, a --config file's). */
  otherTools?: ReadonlyMap<string, string>;
}

/** Descriptions longer than this are not read by a person before approving (the longest of the official servers' is under 500). */
export const MAX_DESCRIPTION = 4096;
/** The server's instructions may be longer (server-everything's are 1.6 KB). */
export const MAX_INSTRUCTIONS = 16_384;
const MAX_SHOWN = 200;

const MODEL_INSTRUCTIONS: readonly RegExp[] = [
  // <IMPORTANT>, </system>, <instructions priority="high">
  /<\s*\/?\s*(?:important|system|instructions?|secret|hidden|critical|admin|override)\b[^<>]{0,60}>/i,
  /\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|preceding|system|original)\s+(?:instructions?|prompts?|rules|directions|messages?|guidelines)\b/i,
  /\b(?:do\s+not|don['’]t|never)\s+(?:tell|inform|mention\s+(?:this|it)\s+to|reveal\s+(?:this|it)\s+to|notify|alert|warn|show)\s+(?:this\s+to\s+)?(?:the\s+)?user\b/i,
  /\b(?:do\s+not|don['’]t|never)\s+let\s+the\s+user\s+(?:know|see|notice|find\s+out)\b/i,
  /\b(?:hide|keep|conceal)\s+(?:this|it|that|these|them)\b(?:\s+\w+){0,2}?\s+from\s+the\s+user\b/i,
  /\bwithout\s+(?:telling|informing|notifying|alerting|asking|warning)\s+(?:the\s+)?user\b/i,
  /\b(?:the\s+)?user\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|notice|be\s+told)\b/i,
  /\b(?:secretly|silently|quietly|covertly|discreetly)\s+(?:send|read|call|include|pass|add|upload|forward|copy|attach|append)\b/i,
  /\b(?:these|this|the\s+following)\s+(?:instructions?|rules?)\s+(?:override|supersede|take\s+precedence)\b/i,
  /\byou\s+are\s+now\s+(?:in|a|an|the)\b/i,
  /\bnew\s+instructions?\s*:/i,
  // Data sent on to an address of the server's choosing: "also send a copy to archive@…", "always forward it to https://…".
  /\b(?:also|always|secretly|first)\s+(?:send|forward|upload|post|copy|cc|bcc|e-?mail|mail)\b[^.\n]{0,60}?\bto\s+(?:https?:\/\/[^\s"'<>]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)/i,
];
/**
 * "Before using this tool…": addressed to the model in a tool's or a prompt's description, but
 * that is what a server's instructions are for ("call get_context before using the other tools"),
 * so it is not looked for there.
 */
const BEFORE_USING =
  /\bbefore\s+(?:using|calling|invoking|running|executing)\s+(?:this|any|the|other)\b[^.\n]{0,40}?\b(?:tool|function)s?\b/i;
/** What is addressed to the model in a definition or a result; the instructions are read without `BEFORE_USING`. */
const ADDRESSED: readonly RegExp[] = [...MODEL_INSTRUCTIONS, BEFORE_USING];

const SENSITIVE_FILES =
  /(?:~|\$HOME|%USERPROFILE%)?[\\/]\.ssh\b|(?<![\w.-])\.ssh[\\/]|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|(?<![\w.-])\.env(?:\.[A-Za-z]+)?(?![\w-])|\.aws[\\/](?:credentials|config)\b|\bcredentials\.json\b|(?<![\w.-])\.(?:netrc|npmrc|pypirc|pgpass|git-credentials)\b|\/etc\/(?:passwd|shadow|sudoers)\b|\.kube[\\/]config\b|\.docker[\\/]config\.json\b|\.gnupg\b|(?<![\w-])mcp\.json\b|\bclaude_desktop_config\.json\b|\bprivate[\s_-]keys?\b|\b(?:seed|recovery)\s+phrase\b/i;

/** Names of parameters that only exist to carry the conversation or a note for the server out. */
const SOLICITING_NAME =
  /^(?:side_?note|note_?for_?(?:the_?)?(?:server|tool)|system_?prompt|chat_?history|conversation(?:_?history)?|previous_?messages|full_?context)$/i;
/** A parameter's description that asks for the conversation, the system prompt, secrets, or a file's contents. */
const SOLICITING_TEXT: readonly RegExp[] = [
  /\b(?:the|your|entire|full|whole)\s+(?:conversation|chat\s+history|system\s+prompt|previous\s+messages|instructions\s+you\s+were\s+given)\b/i,
  /\b(?:include|pass|provide|send|add|put|paste|attach)\s+(?:here\s+)?(?:the\s+|your\s+|all\s+)?(?:full\s+)?(?:contents?|text)\s+of\b/i,
  /\b(?:include|pass|provide|send|add|put|paste|attach)\s+(?:here\s+)?(?:the\s+|your\s+|any\s+|all\s+)?(?:api[\s_-]?keys?|access\s+tokens?|secrets?|passwords?|credentials)\b/i,
];

/**
 * Phrases that point at other servers' tools without naming them, or that rewrite how a named
 * tool is used; a tool the phrase names (its `tool` group) that is the server's own is its business.
 */
const OTHER_TOOLS: readonly RegExp[] = [
  /\b(?:any|every|all|each)\s+other\s+(?:mcp\s+)?(?:servers?|tools?)\b/gi,
  /\b(?:instead\s+of|rather\s+than)\s+(?:using|calling)\s+(?:the\s+)?[`'"]?(?<tool>[\w.-]+)[`'"]?\s+tool\b/gi,
  /\bwhen(?:ever)?\s+(?:the\s+|any\s+)?[`'"]?(?<tool>[\w.-]+)[`'"]?\s+tool\s+is\s+(?:called|used|invoked)\b/gi,
];

function shown(text: string): string {
  const visible = invisibleMarked(text).replace(/\s+/g, ' ').trim();
  return visible.length > MAX_SHOWN ? `${visible.slice(0, MAX_SHOWN)}…` : visible;
}

/** A JSON pointer's segment (RFC 6901). */
const segment = (key: string | number): string => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

/** One string of a definition, where it sits, and what it is. */
interface Scanned {
  pointer: string;
  text: string;
  /** A description (or instructions), held to the length limit; a name or enum value is not. */
  description?: boolean;
  /** It belongs to a parameter: the soliciting detector reads it. */
  parameter?: boolean;
  /** It is a parameter's name. */
  parameterName?: boolean;
}

/** Every string of a JSON Schema, keys included, with its pointer; a property's description and name marked as such. */
function schemaStrings(schema: unknown, base: string, out: Scanned[], depth = 0, inParameter = false): void {
  if (depth > 32 || schema === null || typeof schema !== 'object') {
    if (typeof schema === 'string') out.push({ pointer: base, text: schema, parameter: inParameter });
    return;
  }
  const entries: Array<[string | number, unknown]> = Array.isArray(schema) ? schema.map((v, i) => [i, v]) : Object.entries(schema);
  const isProperties = base.endsWith('/properties');
  for (const [key, value] of entries) {
    const at = `${base}/${segment(key)}`;
    if (isProperties && typeof key === 'string') out.push({ pointer: at, text: key, parameter: true, parameterName: true });
    if (typeof value === 'string' && (key === 'description' || key === 'title'))
      out.push({ pointer: at, text: value, description: key === 'description', parameter: inParameter || depth > 0 });
    else schemaStrings(value, at, out, depth + 1, inParameter || isProperties);
  }
}

function toolStrings(tool: Tool): Scanned[] {
  const out: Scanned[] = [{ pointer: '/name', text: tool.name }];
  if (typeof tool.title === 'string') out.push({ pointer: '/title', text: tool.title });
  if (typeof tool.description === 'string') out.push({ pointer: '/description', text: tool.description, description: true });
  const annotationsTitle = tool.annotations?.title;
  if (typeof annotationsTitle === 'string') out.push({ pointer: '/annotations/title', text: annotationsTitle });
  schemaStrings(tool.inputSchema, '/inputSchema', out);
  if (tool.outputSchema !== undefined) schemaStrings(tool.outputSchema, '/outputSchema', out);
  return out;
}

function promptStrings(prompt: Prompt): Scanned[] {
  const out: Scanned[] = [{ pointer: '/name', text: prompt.name }];
  if (typeof prompt.title === 'string') out.push({ pointer: '/title', text: prompt.title });
  if (typeof prompt.description === 'string') out.push({ pointer: '/description', text: prompt.description, description: true });
  (Array.isArray(prompt.arguments) ? prompt.arguments : []).forEach((argument, i) => {
    const base = `/arguments/${i}`;
    if (typeof argument?.name === 'string')
      out.push({ pointer: `${base}/name`, text: argument.name, parameter: true, parameterName: true });
    if (typeof argument?.title === 'string') out.push({ pointer: `${base}/title`, text: argument.title, parameter: true });
    if (typeof argument?.description === 'string')
      out.push({ pointer: `${base}/description`, text: argument.description, description: true, parameter: true });
  });
  return out;
}

/** A name of another server's tool, as a whole word, that is distinctive enough to mean that tool (not `echo`, not `search`). */
function isDistinctiveName(name: string): boolean {
  return name.length >= 6 && /[_\-.]|[a-z][A-Z]/.test(name);
}

function otherToolsIn(text: string, own: ReadonlySet<string>, context: ScanContext): string | undefined {
  for (const pattern of OTHER_TOOLS) {
    for (const m of text.matchAll(pattern)) if (m.groups?.tool === undefined || !own.has(m.groups.tool)) return m[0];
  }
  if (!context.otherTools) return undefined;
  for (const word of text.match(/[A-Za-z][\w.-]*[A-Za-z0-9]/g) ?? []) {
    if (!own.has(word) && context.otherTools.has(word) && isDistinctiveName(word)) return word;
  }
  return undefined;
}

/** The detectors over one string. */
function scanString(s: Scanned, own: ReadonlySet<string>, context: ScanContext, instructions: boolean): Array<[Detector, string]> {
  const found: Array<[Detector, string]> = [];
  const runs = invisibleRuns(s.text);
  if (runs.length) found.push(['invisible-characters', runs.map((r) => r.shown).join(' ')]);
  // Hidden text is read as the model reads it: the tags spell what the other detectors look for.
  const read = runs.length
    ? s.text.replace(/[\u{E0000}-\u{E007F}]+/gu, (t) => ` ${[...t].map((c) => String.fromCharCode(c.codePointAt(0)! - 0xe0000)).join('')} `)
    : s.text;
  if (s.parameterName) {
    if (SOLICITING_NAME.test(s.text)) found.push(['soliciting-parameter', s.text]);
    return found;
  }
  const instruction = (instructions ? MODEL_INSTRUCTIONS : ADDRESSED).map((p) => p.exec(read)).find((m) => m);
  if (instruction) found.push(['model-instructions', instruction[0]]);
  const file = SENSITIVE_FILES.exec(read);
  if (file) found.push([s.parameter ? 'soliciting-parameter' : 'sensitive-files', file[0]]);
  if (s.parameter && !file) {
    const asks = SOLICITING_TEXT.map((p) => p.exec(read)).find((m) => m);
    if (asks) found.push(['soliciting-parameter', asks[0]]);
  }
  const other = otherToolsIn(read, own, context);
  if (other) found.push(['other-servers-tools', other]);
  if (s.description && s.text.length > (instructions ? MAX_INSTRUCTIONS : MAX_DESCRIPTION))
    found.push(['outsized-description', `${s.text.length} characters: ${s.text.slice(0, 80)}`]);
  return found;
}

function scanItem(kind: ScannedKind, name: string, strings: Scanned[], own: ReadonlySet<string>, context: ScanContext): ScanFinding[] {
  return strings.flatMap((s) =>
    scanString(s, own, context, kind === 'instructions').map(([detector, text]) => ({
      detector,
      kind,
      name,
      pointer: s.pointer,
      text: shown(text),
    })),
  );
}

/** Every finding in what a server offers, in the order of its tools, prompts and instructions. */
export function scanOffered(offered: Offered, context: ScanContext = {}): ScanFinding[] {
  const own = new Set(offered.tools.map((t) => t.name));
  const names = [...own];
  return [
    ...offered.tools.flatMap((t) => scanItem('tool', t.name, toolStrings(t), own, context)),
    ...offered.prompts.flatMap((p) => scanPrompt(p, context, names)),
    ...scanInstructions(offered.instructions, context, names),
  ];
}

/** The findings of one tool (the editor marks it, the gate withholds it until the person accepts it). */
export function scanTool(tool: Tool, context: ScanContext = {}, ownTools: readonly string[] = [tool.name]): ScanFinding[] {
  return scanItem('tool', tool.name, toolStrings(tool), new Set(ownTools), context);
}

/** The findings of one prompt (the editor marks it, the gate withholds it from the chat until the person accepts it). */
export function scanPrompt(prompt: Prompt, context: ScanContext = {}, ownTools: readonly string[] = []): ScanFinding[] {
  return scanItem('prompt', prompt.name, promptStrings(prompt), new Set(ownTools), context);
}

/** The findings of the server's instructions (the editor marks its server; MCP Host passes them to no model). */
export function scanInstructions(
  instructions: string | undefined,
  context: ScanContext = {},
  ownTools: readonly string[] = [],
): ScanFinding[] {
  return instructions
    ? scanItem('instructions', 'instructions', [{ pointer: '', text: instructions, description: true }], new Set(ownTools), context)
    : [];
}

/**
 * What in a result addresses the model (instructions, hidden tag text): such a result is untrusted
 * content (./flowGuard.ts). Only the first finding of each detector; cheap for text with none.
 */
export function addressesModel(text: string): string | undefined {
  const runs = invisibleRuns(text).filter((r) => r.text.codePointAt(0)! >= 0xe0000);
  if (runs.length) return runs[0].shown;
  for (const pattern of ADDRESSED) {
    const m = pattern.exec(text);
    if (m) return shown(m[0]);
  }
  return undefined;
}
