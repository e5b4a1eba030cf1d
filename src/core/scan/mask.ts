/**
 * Masking (the seed's 数据脱敏): well-known secret shapes and the person's own patterns become
 * `[masked: kind]` in what leaves MCP Host for a language model and in the audit log.
 * docs/security-masking.md is the table of what each detector catches and leaves alone.
 *
 * Every detector finds spans of the original text; where two overlap, the one listed first wins,
 * so a text can be masked as one piece or in parts (`maskParts`: a secret split across two
 * content blocks) with the same result.
 *
 * Every built-in pattern is linear: each variable-length run is bounded and starts only where a
 * run of its characters starts (a lookbehind or `\b`), so a long adversarial string costs a
 * bounded amount of work per character (see the adversarial test in test/core/mask.test.ts).
 */
import { withoutInvisible } from './invisible';

/** What masking found and replaced in a text. */
export interface MaskFinding {
  /** The detector's name, as shown in `[masked: kind]`. */
  kind: string;
  count: number;
}

/** Replaces secrets (well-known shapes and the person's own patterns) with `[masked: kind]`. */
export interface Masker {
  maskText(text: string): { text: string; found: MaskFinding[] };
  /**
   * Texts read as one (adjacent content blocks): each part masked where a secret of the joined
   * text lies in it, so a secret split between two parts is still found; as many parts as given.
   */
  maskParts(parts: readonly string[]): { parts: string[]; found: MaskFinding[] };
  /** Every string at any depth of a JSON value, masked; the value is copied, never changed in place. */
  maskValue<T>(value: T): { value: T; found: MaskFinding[] };
}

/** What a detector found: `[start, end)` of the text, masked as `[masked: kind]`. */
interface Span {
  start: number;
  end: number;
  kind: string;
}

interface Detector {
  find(text: string): Iterable<Span>;
}

/** A regex detector: the whole match is masked, or only what follows group 1 (a key or header name kept). */
function regexDetector(kind: string, pattern: RegExp, keepsFirstGroup = false): Detector {
  // One regex per detector: a detector's spans are read to the end before the next detector starts.
  const re = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
  return {
    *find(text) {
      re.lastIndex = 0;
      for (let m = re.exec(text); m; m = re.exec(text)) {
        if (m[0] === '') {
          re.lastIndex++;
          continue;
        }
        const start = m.index + (keepsFirstGroup && m[1] ? m[1].length : 0);
        yield { start, end: m.index + m[0].length, kind };
      }
    },
  };
}

const TOKEN = 'A-Za-z0-9_-';
const PRIVATE_KEY_LABEL = '[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?';
/** A PEM, OpenSSH or PGP armour line (`-----BEGIN …-----`), or an SSH2 (SECSH, RFC 4716) one (`---- BEGIN … ----`). */
const armour = (word: 'BEGIN' | 'END') => `-{4,5} ?${word} ${PRIVATE_KEY_LABEL} ?-{4,5}`;
/** The schemes of an `Authorization` header whose credential follows a space. */
const AUTH_SCHEMES =
  'Bearer|Basic|Token|Digest|Bot|ApiKey|Api-Key|SSWS|Key|OAuth|MAC|Negotiate|NTLM|SharedKey|GenieKey|Splunk|AWS4-HMAC-SHA256';

/**
 * A key's words: `clientSecret`, `client_secret`, `X-Client-Secret` and `APIKey` all split into
 * lower-case words (`client secret`, `x client secret`, `api key`).
 */
function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** A key whose last word is one of these names a secret. */
const SECRET_WORD: Record<string, string> = {
  password: 'password',
  passwd: 'password',
  pwd: 'password',
  passphrase: 'password',
  secret: 'secret',
  token: 'token',
  apikey: 'api-key',
  credential: 'secret',
  credentials: 'secret',
  auth: 'secret',
  authorization: 'authorization',
};

/** `… key` names a secret after one of these words (`api key`, `private key`, `secret access key`). */
const SECRET_KEY_AFTER: Record<string, string> = {
  api: 'api-key',
  private: 'private-key',
  secret: 'secret',
  access: 'secret',
  signing: 'secret',
  encryption: 'secret',
  master: 'secret',
  account: 'secret',
  shared: 'secret',
};

/**
 * Words after the one that names a secret that only say which (`DB_PASSWORD_PROD`, `API_KEY_2`): the
 * word before is read instead.
 */
const QUALIFIERS = new Set([
  'prod',
  'production',
  'dev',
  'development',
  'stg',
  'staging',
  'stage',
  'test',
  'testing',
  'qa',
  'uat',
  'live',
  'local',
  'old',
  'new',
  'current',
  'backup',
  'primary',
  'secondary',
  'main',
  'alt',
  'default',
  'temp',
  'tmp',
]);

/** One word that ends in one of these names a secret too (`PGPASSWORD`, `AUTHTOKEN`, `dbpassword`, `clientsecret`). */
const SECRET_SUFFIXES = ['password', 'passwd', 'passphrase', 'pwd', 'secret', 'token', 'apikey'];

/** `… token` is no secret after these: a page cursor (`nextToken`, `pageToken`), a progress token, a count (`maxToken`). */
const NOT_SECRET_TOKEN_AFTER = new Set([
  'next',
  'page',
  'continuation',
  'continue',
  'sync',
  'resume',
  'cursor',
  'more',
  'prev',
  'previous',
  'start',
  'after',
  'before',
  'pagination',
  'progress',
  'cancellation',
  'max',
  'min',
  'num',
  'total',
  'input',
  'output',
  'prompt',
  'completion',
]);

/**
 * Values that name where a secret comes from instead of holding it: `${{ secrets.TOKEN }}`,
 * `{{ token }}`, `$(cat key)`, `$GITHUB_TOKEN`, `%API_KEY%`, `<your-token>`, `process.env.TOKEN`,
 * `os.environ["TOKEN"]`, Go's `os.Getenv("TOKEN")`, Laravel's `env('TOKEN')`, Ruby's `ENV["TOKEN"]`, `***`.
 * Masking them would only garble a workflow or a program the model reads.
 */
const SECRET_REFERENCE =
  /^(?:\$\{|\{\{|\$\(|\$[A-Z_][A-Z0-9_]*$|%[A-Za-z_][A-Za-z0-9_]*%$|<[^<>]{1,64}>$|\*+$|process\.env\b|os\.environ\b|os\.getenv\b|os\.(?:Getenv|LookupEnv)\b|System\.getenv\b|env\.[A-Za-z_]|env\(|ENV(?:\[|\.fetch\b))/;

const AUTH_SCHEME = new RegExp(`^(?:${AUTH_SCHEMES})$`, 'i');

/** Values that say something about a secret without being one (`password: required`, fetch's `credentials: include`). */
const NOT_A_SECRET_VALUE = /^(?:true|false|null|none|nil|undefined|required|optional|include|omit|same-origin)$/i;

/** Every key `secretKeyKind` accepts contains one of these: most keys are ruled out without splitting them into words. */
const SECRET_HINT = /pass|pwd|secret|token|key|credential|auth/i;

/**
 * A key's words as `secretKeyKind` reads them: a number at the end of a word dropped (`password2`),
 * and a last word that only qualifies (`prod`, `2`) dropped, so the word that names the secret is last.
 */
function keyWords(key: string): string[] {
  const words = wordsOf(key).map((w) => w.replace(/(?<=[a-z])[0-9]+$/, ''));
  while (words.length > 1 && (QUALIFIERS.has(words.at(-1)!) || /^[0-9]+$/.test(words.at(-1)!))) words.pop();
  return words;
}

/** What kind of secret a key's value is, or undefined when the key names none (`maxTokens`, `nextToken`, `passwordPolicy`). */
function secretKeyKind(key: string): string | undefined {
  if (!SECRET_HINT.test(key)) return undefined;
  const words = keyWords(key);
  const last = words.at(-1);
  const before = words.at(-2);
  if (last === undefined) return undefined;
  if (last === 'key') return before === undefined ? undefined : SECRET_KEY_AFTER[before];
  // Rails' SECRET_KEY_BASE.
  if (last === 'base' && before === 'key' && words.at(-3) === 'secret') return 'secret';
  if (last === 'token' && before !== undefined && NOT_SECRET_TOKEN_AFTER.has(before)) return undefined;
  if (SECRET_WORD[last]) return SECRET_WORD[last];
  const suffix = SECRET_SUFFIXES.find((s) => last.length > s.length && last.endsWith(s));
  if (suffix === undefined || (suffix === 'token' && NOT_SECRET_TOKEN_AFTER.has(last.slice(0, -suffix.length)))) return undefined;
  return SECRET_WORD[suffix];
}

/** The key the items of a list under `key` are under: the key, or its singular (`tokens`), when it names a secret. */
function itemsKey(key: string): string | undefined {
  if (secretKeyKind(key) !== undefined) return key;
  const singular = key.replace(/s$/i, '');
  return singular !== key && secretKeyKind(singular) !== undefined ? singular : undefined;
}

/** The keys of a pair that holds a name and its value (`name`/`value`, AWS's `Key`/`Value`, a header's `Name`/`Value`). */
const PAIR_NAME = /^(?:name|key)$/i;
const PAIR_VALUE = /^value$/i;

/** The secret a name/value pair names (`{ name: 'DB_PASSWORD', value: … }`), or undefined. */
function pairName(pair: Record<string, unknown>): string | undefined {
  const keys = Object.keys(pair);
  if (keys.length > 4 || !keys.some((k) => PAIR_VALUE.test(k))) return undefined;
  const name = keys.find((k) => PAIR_NAME.test(k));
  const value = name === undefined ? undefined : pair[name];
  return typeof value === 'string' && secretKeyKind(value) !== undefined ? value : undefined;
}

/** Whether a value under a secret key is the secret (the value as written, quotes included), and what kind it is. */
function secretValueKind(key: string, value: string): string | undefined {
  const kind = secretKeyKind(key);
  if (kind === undefined) return undefined;
  const bare = /^(["'])(.*)\1$/s.exec(value)?.[2] ?? value;
  if (bare === '' || bare.includes('[masked:') || NOT_A_SECRET_VALUE.test(bare) || SECRET_REFERENCE.test(bare)) return undefined;
  // `Authorization: Bearer …` in text: the scheme is no secret, and the `authorization` detector masks what follows it.
  if (kind === 'authorization' && AUTH_SCHEME.test(bare)) return undefined;
  // `PWD=/home/me`, `OLDPWD=/tmp`: the shell's working directories, not passwords.
  if (keyWords(key).at(-1)?.endsWith('pwd') && /^(?:[/~]|[A-Za-z]:[\\/])/.test(bare)) return undefined;
  return kind;
}

/**
 * `key=value`, `key: value`, `"key": "value"`, `'key' => 'value'`, `key := "value"` (JSON, YAML,
 * env, query strings, headers, PHP, Go) and `--key value` / `--key=value` (command lines) where the
 * key names a secret (`secretKeyKind`); the key stays, the value goes. A name after a path separator
 * is a file (`/etc/passwd: denied`), not a key.
 */
const PAIR_KEY = /(?<![A-Za-z0-9_./\\-])(["']?)(--?)?([A-Za-z][A-Za-z0-9_.-]{0,1023})\1([ \t]{0,5}(?:=>|:=|[:=])[ \t]{0,5}|[ \t]{1,5})/g;
/** An unquoted value that ends at a space (`password=x more`, `--token x`). */
const WORD_VALUE = /[^\s"',;&}\]]{1,1024}/y;
/**
 * An unquoted value that runs to the end of its line (a header, YAML, a log line): a passphrase with
 * spaces, a credential after its scheme (`Authorization: Bot …`), masked whole.
 */
const LINE_VALUE = /[^\r\n"',;&}\]]{1,4096}/y;

/**
 * Where a quoted value that starts at `at` ends (after its closing quote), or undefined when it has
 * none on its line. `unclosed` remembers, per quote, the line end a search reached without finding
 * one: a later value of the same quote that starts before it has none either (nothing between was
 * a closing quote), so no text is searched twice, however many keys it holds.
 */
function quotedEnd(text: string, at: number, unclosed: Map<string, number>): number | undefined {
  const quote = text[at];
  if (at < (unclosed.get(quote) ?? -1)) return undefined;
  for (let i = at + 1; i < text.length; i++) {
    const c = text[i];
    if (c === quote) return i > at + 1 ? i + 1 : undefined;
    if (c === '\n' || c === '\r') {
      unclosed.set(quote, i);
      return undefined;
    }
    // JSON's and most languages' escapes; a single-quoted value in YAML or a shell has none, and a backslash there is rare.
    if (c === '\\' && quote === '"') i++;
  }
  unclosed.set(quote, text.length);
  return undefined;
}

/** A YAML block scalar's indicator (`|`, `>-`, `|2`): the value is on the lines below. */
const BLOCK_SCALAR = /^[|>][-+0-9]{0,2}$/;
/** How far a YAML block scalar is read at most. */
const MAX_BLOCK = 16 * 1024;

/** Where a YAML block scalar whose key starts at `keyStart` ends: after the last line below it indented more than the key's. */
function blockScalarEnd(text: string, keyStart: number, from: number): number {
  const before = text.slice(Math.max(0, keyStart - 1024), keyStart);
  const indent = /^[ \t]*/.exec(before.slice(before.lastIndexOf('\n') + 1))![0].length;
  let end = from;
  for (let at = text.indexOf('\n', from); at >= 0 && at - from < MAX_BLOCK;) {
    const next = text.indexOf('\n', at + 1);
    const line = text.slice(at + 1, next < 0 ? text.length : next);
    const content = line.trimStart();
    if (content.trim() !== '') {
      if (line.length - content.length <= indent) break;
      end = next < 0 ? text.length : next;
    }
    at = next;
  }
  return Math.min(end, from + MAX_BLOCK);
}

/** The value of a secret key at `at`, as written (quotes included), or undefined when there is none. */
function pairValue(text: string, at: number, kind: string, separator: string, keyStart: number, unclosed: Map<string, number>) {
  const c = text[at];
  if (c === '"' || c === "'") {
    const end = quotedEnd(text, at, unclosed);
    return end === undefined ? undefined : text.slice(at, end);
  }
  // An object or an array (`"Credentials": {…}`): the pairs inside are masked on their own.
  if (c === '{' || c === '[') return undefined;
  const run = (pattern: RegExp) => {
    pattern.lastIndex = at;
    return pattern.exec(text)?.[0];
  };
  const word = run(WORD_VALUE);
  if (word === undefined) return undefined;
  if (separator.trim() === ':' && BLOCK_SCALAR.test(word)) return text.slice(at, blockScalarEnd(text, keyStart, at + word.length));
  // `key: value` (a header, YAML) runs to the end of its line; `key=value` ends at a space, as a shell
  // reads `PGPASSWORD=x psql`; a credential after its scheme goes with it.
  const wholeLine = kind === 'authorization' || AUTH_SCHEME.test(word) || (separator.includes(':') && !separator.includes('='));
  return wholeLine ? run(LINE_VALUE)?.trimEnd() : word;
}

const pairDetector: Detector = {
  *find(text) {
    const keys = PAIR_KEY;
    const unclosed = new Map<string, number>();
    keys.lastIndex = 0;
    for (let m = keys.exec(text); m; m = keys.exec(text)) {
      const [, , flag, key, separator] = m;
      // `--token VALUE`: whitespace separates a flag from its value, nothing else from a key.
      if (!flag && !/[:=]/.test(separator)) continue;
      // Only a secret's value is read: reading every key's would cost its length at every key (`a:a:a:…`).
      const keyKind = secretKeyKind(key);
      if (keyKind === undefined) continue;
      const value = pairValue(text, keys.lastIndex, keyKind, separator, m.index, unclosed);
      if (value === undefined || (flag && !/[:=]/.test(separator) && value.startsWith('-'))) continue;
      const kind = secretValueKind(key, value);
      if (kind === undefined) continue;
      yield { start: keys.lastIndex, end: keys.lastIndex + value.length, kind };
      keys.lastIndex += value.length;
    }
  },
};

/** `<password>…</password>`, `<ns:token type="x">…</ns:token>`: an XML element named for a secret; the tags stay. */
const XML_ELEMENT = /<([A-Za-z_][\w.:-]{0,127})(?:\s[^<>]{0,1024})?>([^<]{1,65536})<\/\1\s{0,5}>/g;

const xmlDetector: Detector = {
  *find(text) {
    XML_ELEMENT.lastIndex = 0;
    for (let m = XML_ELEMENT.exec(text); m; m = XML_ELEMENT.exec(text)) {
      const [whole, name, value] = m;
      const kind = secretValueKind(name.slice(name.lastIndexOf(':') + 1), value);
      if (kind === undefined) continue;
      const start = m.index + whole.indexOf('>') + 1;
      yield { start, end: start + value.length, kind };
    }
  },
};

/** Order matters: where two detectors find overlapping spans, the one listed first wins. */
const BUILT_IN: readonly Detector[] = [
  // With its END line, or (cut short) to the end of the text, at most 16 KiB.
  regexDetector('private-key', new RegExp(`${armour('BEGIN')}(?:[\\s\\S]{0,16384}?${armour('END')}|[\\s\\S]{0,16384})`, 'g')),
  // PuTTY's .ppk: from its first line to its MAC (or, cut short, to the end of the text, at most 16 KiB).
  regexDetector(
    'private-key',
    /PuTTY-User-Key-File-[0-9]{1,2}:(?:[\s\S]{0,16384}?Private-(?:MAC|Hash):[ \t]{0,5}[0-9a-fA-F]{1,128}|[\s\S]{0,16384})/g,
  ),
  // The 40-character secret right beside an access key id (`AKIA… , wJalr…`), or under its usual name.
  regexDetector('aws-secret-key', /(\b(?:AKIA|ASIA)[A-Z0-9]{16}["']?[\s,;:=|]{1,10}["']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g, true),
  regexDetector('aws-secret-key', /(\baws_?secret_?access_?key["']?\s{0,5}[:=]\s{0,5}["']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/gi, true),
  regexDetector('aws-access-key', /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g),
  regexDetector('github-token', /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/g),
  regexDetector('gitlab-token', new RegExp(`\\bglpat-[${TOKEN}]{20,255}(?![${TOKEN}])`, 'g')),
  regexDetector('slack-token', /\bxox[abprs]-[A-Za-z0-9-]{10,255}(?![A-Za-z0-9-])/g),
  regexDetector('google-api-key', new RegExp(`\\bAIza[${TOKEN}]{35}(?![${TOKEN}])`, 'g')),
  // Stripe's secret and restricted keys; its publishable `pk_` keys are public by design.
  regexDetector('stripe-key', /(?<![A-Za-z0-9_])[sr]k_(?:live|test)_[A-Za-z0-9]{10,255}(?![A-Za-z0-9_])/g),
  // A JWE: five parts, a JSON header first (the encrypted key may be empty).
  regexDetector(
    'jwt',
    new RegExp(
      `(?<![.${TOKEN}])eyJ[${TOKEN}]{5,4096}\\.[${TOKEN}]{0,8192}\\.[${TOKEN}]{8,4096}\\.[${TOKEN}]{1,65536}\\.[${TOKEN}]{8,4096}(?![.${TOKEN}])`,
      'g',
    ),
  ),
  regexDetector(
    'jwt',
    new RegExp(`(?<![.${TOKEN}])eyJ[${TOKEN}]{5,4096}\\.eyJ[${TOKEN}]{5,8192}\\.[${TOKEN}]{10,4096}(?![${TOKEN}])`, 'g'),
  ),
  regexDetector('api-key', new RegExp(`(?<![${TOKEN}])sk-[${TOKEN}]{20,255}(?![${TOKEN}])`, 'g')),
  regexDetector(
    'authorization',
    new RegExp(`(\\b(?:proxy-)?authorization["']?\\s{0,5}[:=]\\s{0,5}["']?(?:${AUTH_SCHEMES})\\s{1,5})[A-Za-z0-9._~+/=-]{6,4096}`, 'gi'),
    true,
  ),
  regexDetector('authorization', /(\bBearer\s{1,5})[A-Za-z0-9._~+/-]{16,4096}=*/g, true),
  regexDetector('slack-webhook', /(\bhttps?:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9/_-]{8,512}/g, true),
  // `scheme://user:password@host` in any scheme (https, postgres, mongodb+srv, redis, amqp…): the user stays.
  // The password runs to the `@` a host follows (then `/`, `:`, `?`, `#`, a space or the end), so an unencoded
  // `@` or `/` in it leaves nothing behind; a port and a path (`host:8443/a@b`) are no password.
  regexDetector(
    'url-password',
    /(\b[A-Za-z][A-Za-z0-9+.-]{1,31}:\/\/[^\s:/?#@[\]"'<>]{0,256}:)(?![0-9]{1,5}(?:[/?#]|$))(?!\[masked)[^\s?#"'<>]{1,512}?(?=@[^\s/?#"'<>@]{0,256}(?:[/?#:\s"'<>]|$))/g,
    true,
  ),
  xmlDetector,
  pairDetector,
];

/** A person's pattern from `mcpHost.masking.patterns`: a regex, or one with the kind it shows. */
export type MaskingPattern = string | { kind?: string; pattern: string };

export interface MaskerSetup {
  masker: Masker;
  /** One line per pattern that is not a valid regex (the pattern and why); those are skipped. */
  problems: string[];
}

export function createMasker(patterns: readonly MaskingPattern[] = []): MaskerSetup {
  const problems: string[] = [];
  const own: Detector[] = [];
  for (const entry of patterns) {
    const source = typeof entry === 'string' ? entry : entry?.pattern;
    const kind = (typeof entry === 'string' ? undefined : entry?.kind) || 'custom';
    if (typeof source !== 'string' || source === '') {
      problems.push(`${JSON.stringify(entry)}: not a pattern`);
      continue;
    }
    try {
      const pattern = new RegExp(source, 'g');
      if (pattern.test('')) {
        problems.push(`${source}: matches the empty text`);
        continue;
      }
      own.push(regexDetector(kind, pattern));
    } catch (error) {
      problems.push(`${source}: ${(error as Error).message}`);
    }
  }
  return { masker: new PatternMasker([...BUILT_IN, ...own], own), problems };
}

/**
 * What a text holds wherever a built-in detector finds something (a separator for `key=value`, a
 * flag's dash, or a detector's own mark), so a text without any is masked by the person's patterns
 * alone: most strings of a result (its keys, `text`, short words) have none, and every built-in
 * detector was most of the cost of masking a chat call's result.
 */
const MIGHT_HOLD_SECRET = /[:=-]|<\/|AKIA|ASIA|aws|gh|github|xox|AIza|k_|eyJ|authorization|Bearer/i;

class PatternMasker implements Masker {
  constructor(
    private readonly detectors: readonly Detector[],
    /** The person's own patterns: run on every text. */
    private readonly own: readonly Detector[],
  ) {}

  maskText(text: string): { text: string; found: MaskFinding[] } {
    const counts = new Map<string, number>();
    return { text: this.maskInto(text, counts), found: findings(counts) };
  }

  maskParts(parts: readonly string[]): { parts: string[]; found: MaskFinding[] } {
    const counts = new Map<string, number>();
    return { parts: this.partsMasked(parts, counts), found: findings(counts) };
  }

  private partsMasked(parts: readonly string[], counts: Map<string, number>): string[] {
    const spans = this.spans(parts.join(''), counts);
    const out: string[] = [];
    let offset = 0;
    let first = 0;
    for (const part of parts) {
      const end = offset + part.length;
      let text = '';
      let at = offset;
      while (first < spans.length && spans[first].end <= offset) first++;
      for (let s = first; s < spans.length && spans[s].start < end; s++) {
        const span = spans[s];
        const from = Math.max(span.start, offset);
        text += part.slice(at - offset, from - offset);
        // The marker goes where the secret starts; a later part only loses its share of it.
        if (span.start >= offset) text += `[masked: ${span.kind}]`;
        at = Math.min(span.end, end);
      }
      text += part.slice(at - offset);
      out.push(text);
      offset = end;
    }
    // A secret that starts a part may follow a word character of the one before (`x` + `ghp_…`), where the joined text hides it.
    return out.map((p) => this.maskInto(p, counts));
  }

  maskValue<T>(value: T): { value: T; found: MaskFinding[] } {
    const counts = new Map<string, number>();
    // No recursion: a value nested thousands deep is walked with a stack of its own, not the call stack's.
    const root: { value?: unknown } = {};
    const todo: Array<{ from: unknown; key: string | undefined; put: (v: unknown) => void }> = [
      { from: value, key: undefined, put: (v) => (root.value = v) },
    ];
    for (let item = todo.pop(); item; item = todo.pop()) {
      const { from, key, put } = item;
      if (typeof from === 'string') {
        const kind = key === undefined ? undefined : secretValueKind(key, from);
        if (kind !== undefined) {
          counts.set(kind, (counts.get(kind) ?? 0) + 1);
          put(`[masked: ${kind}]`);
        } else put(this.maskInto(from, counts));
      } else if (typeof from === 'number' || typeof from === 'bigint') {
        // A PIN or a numeric password: a number under a secret key is the secret too.
        const kind = key === undefined ? undefined : secretKeyKind(key);
        if (kind !== undefined) counts.set(kind, (counts.get(kind) ?? 0) + 1);
        put(kind === undefined ? from : `[masked: ${kind}]`);
      } else if (Array.isArray(from) && key !== undefined && itemsKey(key) !== undefined) {
        // `tokens: [...]`, `password: [...]`: each item is under the key (its singular).
        const out: unknown[] = new Array(from.length);
        put(out);
        const under = itemsKey(key);
        for (let i = from.length - 1; i >= 0; i--) todo.push({ from: from[i], key: under, put: (x) => (out[i] = x) });
      } else if (Array.isArray(from) && from.length === 2 && typeof from[0] === 'string' && secretKeyKind(from[0]) !== undefined) {
        // A header as a tuple, `['X-Api-Key', '…']`: the second is under the first.
        const out: unknown[] = [this.maskInto(from[0], counts), undefined];
        put(out);
        todo.push({ from: from[1], key: from[0], put: (x) => (out[1] = x) });
      } else if (Array.isArray(from) && from.length > 1 && from.every((item) => typeof item === 'string')) {
        // Strings side by side are read as lines (a PEM key split into an array of its lines): a secret across them is found.
        put(this.maskLines(from as string[], counts));
      } else if (Array.isArray(from)) {
        const out: unknown[] = new Array(from.length);
        put(out);
        // Pushed last to first, so they are masked (and counted) first to last.
        for (let i = from.length - 1; i >= 0; i--) todo.push({ from: from[i], key: undefined, put: (x) => (out[i] = x) });
      } else if (from && typeof from === 'object') {
        const out: Record<string, unknown> = {};
        put(out);
        const children: typeof todo = [];
        // A pair that names its secret beside it (`{ name: 'DB_PASSWORD', value: '…' }`, AWS's `Key`/`Value`): its value is under that name.
        const named = pairName(from as Record<string, unknown>);
        for (const [k, v] of Object.entries(from as Record<string, unknown>)) {
          // A secret used as a key is masked too; two that mask alike stay two keys.
          let name = this.maskInto(k, counts);
          for (let n = 2; name !== k && Object.hasOwn(out, name); n++) name = `${this.maskInto(k, new Map())} (${n})`;
          // Defined, not assigned: a `__proto__` key stays a key. Defined now, so the keys keep their order.
          Object.defineProperty(out, name, { value: undefined, enumerable: true, writable: true, configurable: true });
          children.push({ from: v, key: named !== undefined && PAIR_VALUE.test(k) ? named : k, put: (x) => (out[name] = x) });
        }
        for (let i = children.length - 1; i >= 0; i--) todo.push(children[i]);
      } else put(from);
    }
    return { value: root.value as T, found: findings(counts) };
  }

  /** Lines masked as one text (joined by line breaks), each line keeping its place: a secret across lines marks the first, the others lose their share. */
  private maskLines(lines: readonly string[], counts: Map<string, number>): string[] {
    const parts = lines.flatMap((line, i) => (i === 0 ? [line] : ['\n', line]));
    return this.partsMasked(parts, counts).filter((_, i) => i % 2 === 0);
  }

  private maskInto(text: string, counts: Map<string, number>): string {
    const spans = this.spans(text, counts);
    let out = '';
    let at = 0;
    for (const span of spans) {
      out += `${text.slice(at, span.start)}[masked: ${span.kind}]`;
      at = span.end;
    }
    return spans.length ? out + text.slice(at) : text;
  }

  /** The spans to mask, in order and not overlapping; counted by kind in the order of the detectors. */
  private spans(text: string, counts: Map<string, number>): Span[] {
    // Each detector's spans come in order: merged into the ones taken so far in one pass, dropped where they overlap one.
    let taken: Span[] = [];
    for (const detector of MIGHT_HOLD_SECRET.test(text) ? this.detectors : this.own) {
      const merged: Span[] = [];
      let i = 0;
      for (const span of detector.find(text)) {
        while (i < taken.length && taken[i].start < span.start) merged.push(taken[i++]);
        const before = merged.at(-1);
        if ((before && before.end > span.start) || (i < taken.length && taken[i].start < span.end)) continue;
        merged.push(span);
        counts.set(span.kind, (counts.get(span.kind) ?? 0) + 1);
      }
      while (i < taken.length) merged.push(taken[i++]);
      taken = merged;
    }
    return taken;
  }
}

function findings(counts: Map<string, number>): MaskFinding[] {
  return [...counts].map(([kind, count]) => ({ kind, count }));
}

/** "2 × github-token, 1 × jwt": what the sampling Review shows was masked. */
export function describeFindings(found: readonly MaskFinding[]): string {
  return found.map((f) => `${f.count} × ${f.kind}`).join(', ');
}

/**
 * A masker whose every output has the invisible characters of server text removed (tag
 * characters, zero-width and bidirectional controls, ANSI escapes: ../scan/invisible.ts), so what
 * a model reads (the chat's, a server's sampling request) is what a person would see. The person's own documents mark them instead (`invisibleMarked`).
 */
export function invisibleRemoved(masker: Masker): Masker {
  return {
    maskText: (text) => {
      const masked = masker.maskText(text);
      return { ...masked, text: withoutInvisible(masked.text) };
    },
    maskParts: (parts) => {
      const masked = masker.maskParts(parts);
      return { ...masked, parts: masked.parts.map(withoutInvisible) };
    },
    maskValue: (value) => {
      const masked = masker.maskValue(value);
      return { ...masked, value: stringsWithoutInvisible(masked.value) };
    },
  };
}

function stringsWithoutInvisible<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return withoutInvisible(value) as T;
  if (!value || typeof value !== 'object' || depth > 64) return value;
  if (Array.isArray(value)) return value.map((v: unknown) => stringsWithoutInvisible(v, depth + 1)) as T;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stringsWithoutInvisible(v, depth + 1)])) as T;
}
