/**
 * How the roots fence (./fence.ts) reads one string before it reads paths in it: every text a
 * server plausibly takes from it. Two kinds:
 *
 * - **Variants**, the whole string read another way: trimmed, cut at a NUL, percent-decoded, as a
 *   URL parser gets it (tab, newline and carriage return stripped anywhere, as the WHATWG parser
 *   and Python's urllib do), with its variables expanded (as a shell, Go's `os.ExpandEnv` or
 *   Python's `os.path.expandvars` would, against the server's environment), and their combinations.
 * - **Inner texts and values**, what a server finds inside it and reads on its own: the value of a
 *   `--flag=value` word, a `data:` URL's content, each line under a path name, and JSON.
 *
 * Everything here is text: no file system, no path rules but the platform's name. The fence turns
 * each variant into paths and checks inner texts as strings of their own, the same way.
 */
import { argumentLimitProblem, MAX_ARGUMENT_DEPTH } from './limits';

/** A text a server may read in a string, and the variables expanded in it whose values are not to be shown (no path: perhaps a secret). */
export interface Text {
  text: string;
  hidden?: readonly string[];
  /** Set when the string could not be read this way (its variables expand to too much): the fence refuses it. */
  problem?: string;
}

/** What reading a string needs of the server: its platform, its environment and its working folder. */
export interface StringReader {
  platform: NodeJS.Platform;
  /** The server's environment; undefined when unknown (every variable then reads as unset). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Windows' `%CD%`. */
  cwd?: string;
}

/** How many variants of one string are read at most (its readings combine: trimmed and decoded and expanded…). */
const MAX_VARIANTS = 32;

/** What trimming removes, as JavaScript's `trim`, Python's `strip` and a C parser skipping control characters would. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is trimmed
const EDGE = /^[\s\u0000-\u001f\u007f-\u009f\u200b\ufeff]+|[\s\u0000-\u001f\u007f-\u009f\u200b\ufeff]+$/g;
// eslint-disable-next-line no-control-regex -- as EDGE
const EDGE_CHAR = /[\s\u0000-\u001f\u007f-\u009f\u200b\ufeff]/;

/** The string trimmed (EDGE); most strings have nothing to trim, and are returned as they are without a copy. */
export function trimmed(text: string): string {
  return text !== '' && (EDGE_CHAR.test(text[0]) || EDGE_CHAR.test(text[text.length - 1])) ? text.replace(EDGE, '') : text;
}
export const LINE_BREAK = /[\r\n\u0085\u2028\u2029]/;
/** A URI's scheme, at the very start. */
export const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
/** What the WHATWG URL parser (and Python's urlsplit) removes anywhere in a URL before reading it. */
const URL_STRIPPED = /[\t\n\r]/g;
/** What the WHATWG URL parser trims from both ends: C0 controls and space. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is trimmed
const URL_EDGE = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;

/** Percent-decoded (a reading of its own when it differs), strictly when it can be, else leniently. */
export function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    // No UTF-8 (`%ff`), or a `%` without two hex digits: as Python's `unquote` reads it, each bad
    // byte a U+FFFD and the rest decoded (so the `%2e%2e` around `%ff` is still `..`).
    const lenient = percentDecodedBytes(text).toString('utf8');
    return lenient === text ? undefined : lenient;
  }
}

/** A scheme, perhaps with tab and line breaks inside it, at the start: only such a string can become a URL when they are stripped. */
// eslint-disable-next-line no-control-regex -- what the URL parser trims
const BROKEN_SCHEME = /^[\u0000-\u0020]*[a-z][a-z0-9+.\-\t\n\r]*:/i;

/** The string as a URL parser reads it, when that differs and starts with a scheme (`fi\nle:///x` is `file:///x`). */
export function urlText(text: string): string | undefined {
  if (!/[\t\n\r]/.test(text) || !BROKEN_SCHEME.test(text)) return undefined;
  const url = text.replace(URL_STRIPPED, '').replace(URL_EDGE, '');
  return SCHEME.test(url) ? url : undefined;
}

// Variables: `$NAME`, `${NAME}`, `${NAME op word}` (op: - = + ? with or without :), `${…}` read as a name
// (Go), shell parameters (`$1`, `$@`), and on Windows `%NAME%`. A name is read whole, however long (a
// shell does); a `${` scans at most to the next brace, so this stays linear.
const VARIABLE = /\$(?:\{([^{}]*)\}|([A-Za-z_][A-Za-z0-9_]*)|([*#$@!?0-9-]))/g;
const BRACED = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=+?])(.*))?$/s;
const WINDOWS_VARIABLE = /%([^%\r\n]{1,256})%/g;
/** How long a string's variables may make it: past this it is refused unread (`$PATH` a million times). */
export const MAX_EXPANDED = 1024 * 1024;
/** A value shown as it is when a path it makes lies outside: a path (or nothing). Any other value may be a secret. */
const PATH_SHAPED = /^(?:$|[/\\~]|[A-Za-z]:[\\/])/;

/** The server's variable `name`: Windows' names are case-insensitive, and `cmd` reads `%CD%` as its working folder. */
function lookup(reader: StringReader, name: string): string | undefined {
  const env = reader.env ?? {};
  if (reader.platform !== 'win32') return env[name];
  const upper = name.toUpperCase();
  for (const key of Object.keys(env)) if (key.toUpperCase() === upper) return env[key];
  return upper === 'CD' ? reader.cwd : undefined;
}

/**
 * `text` with each match of `pattern` replaced by `by(match)`, stopping (the rest kept as it is) once
 * `done()`: an `exec` loop, which costs a tenth of `String.replace` with a function where a string
 * holds hundreds of thousands of matches.
 */
function substituted(text: string, pattern: RegExp, by: (m: RegExpExecArray) => string, done: () => boolean): string {
  const re = new RegExp(pattern.source, pattern.flags);
  let out = '';
  let at = 0;
  for (let m = re.exec(text); m && !done(); m = re.exec(text)) {
    out += text.slice(at, m.index) + by(m);
    at = m.index + m[0].length;
  }
  return out + text.slice(at);
}

/**
 * The string with its variables expanded, as the shell and Go's `os.ExpandEnv` read them: a set
 * variable is its value, an unset one (and a shell parameter such as `$1`) is empty; on Windows
 * `%NAME%` too, an unset one kept as written (as `cmd` and `ExpandEnvironmentStrings` keep it).
 * Undefined when there is nothing to expand; a `problem` when the values would add more than
 * {@link MAX_EXPANDED} characters.
 */
function expanded(text: string, reader: StringReader): Text | undefined {
  const windows = reader.platform === 'win32';
  if (!text.includes('$') && !(windows && text.includes('%'))) return undefined;
  const hidden = new Set<string>();
  // What the values add, counted as they are put in: the string is never built past the bound.
  let added = 0;
  const over = () => added > MAX_EXPANDED;
  const value = (name: string): string | undefined => {
    const v = lookup(reader, name);
    if (v === undefined || (added += v.length) > MAX_EXPANDED) return undefined;
    if (!PATH_SHAPED.test(v)) hidden.add(name);
    return v;
  };
  const variable = ([, braced, bare]: RegExpExecArray): string => {
    if (bare !== undefined) return value(bare) ?? '';
    if (braced === undefined) return '';
    const m = BRACED.exec(braced);
    if (!m) return value(braced) ?? '';
    const [, name, op, word = ''] = m;
    const v = value(name);
    const alternative = () => substituted(word, VARIABLE, variable, over);
    switch (op) {
      case '-':
      case '=':
        return v ?? alternative();
      case ':-':
      case ':=':
        return v ? v : alternative();
      case '+':
        return v === undefined ? '' : alternative();
      case ':+':
        return v ? alternative() : '';
      default:
        // No operator, or `?` (the shell stops there: what is set is all that can be read).
        return v ?? '';
    }
  };
  let out = substituted(text, VARIABLE, variable, over);
  if (windows) out = substituted(out, WINDOWS_VARIABLE, (m) => value(m[1]) ?? m[0], over);
  if (over()) return { text: '', problem: `(its variables expand to more than ${MAX_EXPANDED} characters: not read)` };
  return out === text ? undefined : { text: out, hidden: [...hidden] };
}

/**
 * The string as servers may read it: as given, trimmed, cut at the first NUL, percent-decoded, as a
 * URL parser gets it, Unicode-normalised (NFKC: `．．／` is `../`, as Python's `unicodedata` and
 * Windows' best-fit conversion to a code page read fullwidth forms), variables expanded, and
 * combinations. A variant with a `problem` says the string cannot be read (the fence refuses it).
 */
export function textVariants(text: string, reader: StringReader, hidden?: readonly string[]): Text[] {
  const seen = new Map<string, Text>();
  const queue: Text[] = [];
  const add = (t: Text) => {
    if (seen.size < MAX_VARIANTS && !seen.has(t.text)) {
      seen.set(t.text, t);
      queue.push(t);
    }
  };
  add({ text, hidden });
  for (let i = 0; i < queue.length && seen.size < MAX_VARIANTS; i++) {
    const { text: t, hidden: h } = queue[i];
    add({ text: trimmed(t), hidden: h });
    const nul = t.indexOf('\u0000');
    if (nul >= 0) add({ text: t.slice(0, nul), hidden: h });
    const d = t.includes('%') ? decoded(t) : undefined;
    if (d !== undefined) add({ text: d, hidden: h });
    const u = urlText(t);
    if (u !== undefined) add({ text: u, hidden: h });
    // eslint-disable-next-line no-control-regex -- anything past ASCII
    if (/[^\u0000-\u007f]/.test(t)) add({ text: t.normalize('NFKC'), hidden: h });
    const e = expanded(t, reader);
    if (e?.problem) return [e];
    if (e) add({ text: e.text, hidden: h?.length ? [...new Set([...h, ...(e.hidden ?? [])])] : e.hidden });
  }
  return [...seen.values()];
}

/** A `--flag=value` (or `-Dname=value`), or a `name=value` argument (dd's `if=/x`, curl's `-F body=@/x`): its value, the rest of the string. */
const WHOLE_FLAG = /^(?:-{1,2}[A-Za-z0-9]|[A-Za-z_])[\w.:-]*=(.*)$/s;
/** A short flag with its value attached (`-o/path`, `-I../include`). */
const ATTACHED_FLAG = /^-[A-Za-z]([/\\~.$%].*)$/s;
/** One line of configuration, `key: value` (YAML) or `key = "value"` (TOML, INI), its value one word (so `Note: see /x` stays a sentence): its value. */
const KEY_VALUE_LINE = /^\s*(?:"[^"\n]{1,256}"|'[^'\n]{1,256}'|[A-Za-z_][\w.-]{0,255})\s*(?::\s|=)\s*("[^"\n]*"|'[^'\n]*'|\S+)\s*$/;
/** A word of a line and the one that follows (quoted or not). */
const WORD_VALUE = `("[^"\\n]*"|'[^'\\n]*'|\\S+)`;
/** The `--flag=value` and `name=value` words of one line of words. */
const FLAG_WORDS = new RegExp(`(?:^|\\s)(?:-{1,2}[A-Za-z0-9]|[A-Za-z_])[\\w.:-]{0,255}=${WORD_VALUE}`, 'g');
/** A flag's value in the next word (`-f /x`, `--from-file /x`): the word after a flag, unless it is one. */
const NEXT_WORD_FLAGS = /(?:^|\s)-{1,2}[A-Za-z][\w.-]{0,255}\s+("[^"\n]*"|'[^'\n]*'|[^\s-]\S*)/g;
/** curl's, httpie's and response files' `@file` words. */
const AT_WORDS = new RegExp(`(?:^|\\s)@${WORD_VALUE}`, 'g');
/** Without the quotes around it (looked at only when it starts with one: a line holds hundreds of thousands of words). */
const unquoted = (value: string) => (value[0] === '"' || value[0] === "'" ? (/^(["'])(.*)\1$/s.exec(value)?.[2] ?? value) : value);

/**
 * The values a program reads from its words in the string (one argument, or one line of them): a
 * flag's or a `name=value`'s value, a short flag's attached value, the word after a flag, the file
 * of `@file`, the value of one line of configuration.
 */
function flagValues(text: string): string[] {
  if (!/[-=@:]/.test(text)) return [];
  const out: string[] = [];
  const whole = WHOLE_FLAG.exec(text)?.[1] ?? ATTACHED_FLAG.exec(text)?.[1];
  if (whole !== undefined) out.push(unquoted(whole));
  if (text.length > 1 && text.startsWith('@')) out.push(text.slice(1));
  if (LINE_BREAK.test(text)) return out;
  const line = KEY_VALUE_LINE.exec(text)?.[1];
  if (line) out.push(unquoted(line));
  if (/\s/.test(text))
    for (const words of [FLAG_WORDS, NEXT_WORD_FLAGS, AT_WORDS]) for (const m of text.matchAll(words)) out.push(unquoted(m[1]));
  return out;
}

const DATA_URL = /^data:([^,]*),(.*)$/is;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Percent-decoded to bytes, as a data: URL's body is (a `%` not followed by two hex digits stays). */
function percentDecodedBytes(text: string): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (const m of text.matchAll(/(?:%[0-9A-Fa-f]{2})+/g)) {
    parts.push(Buffer.from(text.slice(at, m.index), 'utf8'), Buffer.from(m[0].replace(/%/g, ''), 'hex'));
    at = m.index + m[0].length;
  }
  parts.push(Buffer.from(text.slice(at), 'utf8'));
  return Buffer.concat(parts);
}

/**
 * What a `data:` URL holds, as text (plain or base64), in each way decoders read it: base64 with
 * `-` and `_` as URL-safe digits (Node's), and with every character outside the standard alphabet
 * dropped (Python's `b64decode`, browsers'). None for bytes that are no text (an image): they name no path.
 */
function dataContents(text: string): string[] {
  const m = DATA_URL.exec(text);
  if (!m) return [];
  const body = percentDecodedBytes(m[2]);
  if (!/;\s*base64\s*$/i.test(m[1])) return textOf(body);
  const digits = body.toString('latin1').replace(/[\t\n\f\r ]/g, '');
  const standard = digits.replace(/[^A-Za-z0-9+/=]/g, '');
  return [...new Set([...textOf(Buffer.from(digits, 'base64')), ...(standard === digits ? [] : textOf(Buffer.from(standard, 'base64')))])];
}

/** The bytes as UTF-8 text, or nothing when they are not. */
function textOf(bytes: Buffer): string[] {
  try {
    return [utf8.decode(bytes)];
  } catch {
    return [];
  }
}

/** Whether JSON text nests no deeper than `max` (a linear scan: JSON.parse of a million `[` takes seconds). */
function nestsWithin(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return false;
    } else if (c === 125 || c === 93) depth--;
  }
  return true;
}

/** The keys of JSON text: string literals followed by a colon. */
const JSON_KEYS = /"(?:[^"\\]|\\.)*"\s*:/g;
/** A token of lenient JSON: a double- or single-quoted string, a comment (passed over), or a bare word between its punctuation. */
const JSON_TOKEN = /"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\/\*[\s\S]*?\*\/|\/\/.*|[^\s,{}[\]"']+/g;

/** Every string a lenient JSON reader may take from the text: its string literals (decoded), and its bare words (a key's colon dropped). */
function jsonTokens(text: string): string[] {
  const out: string[] = [];
  for (const [token] of text.matchAll(JSON_TOKEN)) {
    if (token.startsWith('/*') || token.startsWith('//')) continue;
    if (token.startsWith('"')) {
      try {
        out.push(JSON.parse(token) as string);
        continue;
      } catch {
        // Not a JSON string (an escape JSON has not): as written, without its quotes.
      }
    }
    out.push(/^(["']).*\1$/s.test(token) ? token.slice(1, -1) : token.replace(/:$/, ''));
  }
  return out;
}

/** How many keys the parsed JSON holds, at any depth (its size is already bounded by the argument limits' check). */
function keysIn(value: unknown): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (Array.isArray(v)) stack.push(...(v as unknown[]));
    else if (v && typeof v === 'object') {
      const values = Object.values(v);
      count += values.length;
      stack.push(...values);
    }
  }
  return count;
}

const JSON_ENDS: Record<string, string> = { '{': '}', '[': ']', '"': '"' };
/** An object, an array or a string, by its first and last characters (most strings are ruled out at once). */
const looksLikeJson = (text: string) => text.length >= 2 && JSON_ENDS[text[0]] === text[text.length - 1];

/** What a server finds inside a string and reads on its own; `problem` when it is too much to read (the fence then refuses). */
export interface Inner {
  texts: Text[];
  values: Array<{ value: unknown; hidden?: readonly string[] }>;
  problem?: string;
}

/**
 * What is inside a string's variants: the values of its flags, a `data:` URL's content, each line
 * (under a path name), JSON (an object, an array or a string). Several lines under an ordinary name
 * are prose or a file's content (a JSON file being written): neither their flags nor their JSON are read.
 */
export function innerOf(variants: readonly Text[], pathNamed: boolean): Inner {
  const texts = new Map<string, Text>();
  const values: Inner['values'] = [];
  const parsed = new Set<string>();
  const inner: Inner = { texts: [], values };
  const add = (text: string, hidden: readonly string[] | undefined) => {
    if (text !== '' && !texts.has(text)) texts.set(text, { text, hidden });
  };
  for (const { text, hidden } of variants) {
    for (const value of flagValues(text)) add(value, hidden);
    if (/^data:/i.test(text)) for (const content of dataContents(text)) add(content, hidden);
    const lines = LINE_BREAK.test(text);
    if (lines && pathNamed) for (const line of text.split(/\r\n|[\r\n\u0085\u2028\u2029]/)) add(line, hidden);
    const json = trimmed(text);
    if ((lines && !pathNamed) || parsed.has(json) || !looksLikeJson(json)) continue;
    parsed.add(json);
    if (!nestsWithin(json, MAX_ARGUMENT_DEPTH)) {
      inner.problem = `(JSON nested deeper than ${MAX_ARGUMENT_DEPTH} levels: not read)`;
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      // Not JSON, but a lenient reader's (comments, trailing commas, JSON5, YAML's `{key: value}`):
      // every token of it.
      for (const token of jsonTokens(json)) add(token, hidden);
      continue;
    }
    // A key given twice: a first-wins reader takes the value JSON.parse dropped, so every token too.
    if (typeof value === 'object' && keysIn(value) < (json.match(JSON_KEYS)?.length ?? 0))
      for (const token of jsonTokens(json)) add(token, hidden);
    if (typeof value === 'string') add(value, hidden);
    else {
      const problem = argumentLimitProblem(value);
      if (problem) inner.problem = `(JSON inside it: ${problem.replace(/^the arguments /, '')}: not read)`;
      else values.push({ value, hidden });
    }
  }
  inner.texts = [...texts.values()];
  return inner;
}
