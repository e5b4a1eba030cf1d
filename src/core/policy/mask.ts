/**
 * Masking (the seed's 数据脱敏): well-known secret shapes and the person's own patterns become
 * `[masked: kind]` in what leaves MCP Host for a language model and in the audit log.
 *
 * Every built-in pattern is linear: each variable-length run is bounded and starts only where a
 * run of its characters starts (a lookbehind or `\b`), so a long adversarial string costs a
 * bounded amount of work per character (see the adversarial test in test/core/mask.test.ts).
 */
import type { Masker, MaskFinding } from './types';

interface Detector {
  kind: string;
  /** Global. */
  pattern: RegExp;
  /** Group 1 is kept (a key or header name) and only the rest is masked. */
  keepsFirstGroup?: boolean;
  /** The kind from the match itself (a `password=` pair says `password`). */
  kindOf?: (keep: string) => string;
}

const TOKEN = 'A-Za-z0-9_-';
const SECRET_KEY = String.raw`(?:[A-Za-z0-9-]{0,40}_)?(password|passwd|pwd|secret|token|api[_-]?key|apikey)`;

function pairKind(keep: string): string {
  const word = /(password|passwd|pwd|secret|token|api[_-]?key|apikey)["']?\s*[:=]/i.exec(keep)?.[1].toLowerCase() ?? 'secret';
  if (word.startsWith('pass') || word === 'pwd') return 'password';
  if (word.startsWith('api')) return 'api-key';
  return word;
}

/** Order matters: a shape that contains another (the AWS pair, a header's token) comes first. */
const BUILT_IN: readonly Detector[] = [
  {
    kind: 'private-key',
    pattern: /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----[\s\S]{0,16384}?-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----/g,
  },
  {
    // The 40-character secret right beside an access key id (`AKIA… , wJalr…`), or under its usual name.
    kind: 'aws-secret-key',
    pattern: /(\b(?:AKIA|ASIA)[A-Z0-9]{16}["']?[\s,;:=|]{1,10}["']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g,
    keepsFirstGroup: true,
  },
  {
    kind: 'aws-secret-key',
    pattern: /(\baws_?secret_?access_?key["']?\s{0,5}[:=]\s{0,5}["']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/gi,
    keepsFirstGroup: true,
  },
  { kind: 'aws-access-key', pattern: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g },
  {
    kind: 'github-token',
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/g,
  },
  { kind: 'gitlab-token', pattern: new RegExp(`\\bglpat-[${TOKEN}]{20,255}(?![${TOKEN}])`, 'g') },
  { kind: 'slack-token', pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,255}(?![A-Za-z0-9-])/g },
  { kind: 'google-api-key', pattern: new RegExp(`\\bAIza[${TOKEN}]{35}(?![${TOKEN}])`, 'g') },
  {
    kind: 'jwt',
    pattern: new RegExp(`(?<![.${TOKEN}])eyJ[${TOKEN}]{5,4096}\\.eyJ[${TOKEN}]{5,8192}\\.[${TOKEN}]{10,4096}(?![${TOKEN}])`, 'g'),
  },
  { kind: 'api-key', pattern: new RegExp(`(?<![${TOKEN}])sk-[${TOKEN}]{20,255}(?![${TOKEN}])`, 'g') },
  {
    kind: 'authorization',
    pattern: /(\b(?:proxy-)?authorization["']?\s{0,5}[:=]\s{0,5}["']?(?:Bearer|Basic|Token|Digest)\s{1,5})[A-Za-z0-9._~+/=-]{6,4096}/gi,
    keepsFirstGroup: true,
  },
  { kind: 'authorization', pattern: /(\bBearer\s{1,5})[A-Za-z0-9._~+/-]{16,4096}=*/g, keepsFirstGroup: true },
  {
    // `password=hunter2`, `api_key: "…"`, `"secret": "…"` (JSON text); the key stays, the value goes.
    kind: 'secret',
    pattern: new RegExp(
      String.raw`((?<![A-Za-z0-9_-])["']?${SECRET_KEY}["']?[ \t]{0,5}[:=][ \t]{0,5})("(?!\[masked)(?:[^"\\\n]|\\.){1,1024}"|'[^'\n]{1,1024}'|(?!\[masked)[^\s"',;&}\]]{1,1024})`,
      'gi',
    ),
    kindOf: pairKind,
    keepsFirstGroup: true,
  },
];

/** A key of a JSON object whose string value is a secret whatever it looks like. */
const SECRET_NAME = new RegExp(`^${SECRET_KEY}$`, 'i');

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
      own.push({ kind, pattern });
    } catch (error) {
      problems.push(`${source}: ${(error as Error).message}`);
    }
  }
  return { masker: new PatternMasker([...BUILT_IN, ...own]), problems };
}

class PatternMasker implements Masker {
  constructor(private readonly detectors: readonly Detector[]) {}

  maskText(text: string): { text: string; found: MaskFinding[] } {
    const counts = new Map<string, number>();
    const out = this.maskInto(text, counts);
    return { text: out, found: findings(counts) };
  }

  maskValue<T>(value: T): { value: T; found: MaskFinding[] } {
    const counts = new Map<string, number>();
    const walk = (v: unknown, key: string | undefined): unknown => {
      if (typeof v === 'string') {
        if (key !== undefined && v !== '' && !v.startsWith('[masked:') && SECRET_NAME.test(key)) {
          const kind = pairKind(`${key}=`);
          counts.set(kind, (counts.get(kind) ?? 0) + 1);
          return `[masked: ${kind}]`;
        }
        return this.maskInto(v, counts);
      }
      if (Array.isArray(v)) return v.map((item) => walk(item, undefined));
      if (v && typeof v === 'object') {
        return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, item]) => [k, walk(item, k)]));
      }
      return v;
    };
    return { value: walk(value, undefined) as T, found: findings(counts) };
  }

  private maskInto(text: string, counts: Map<string, number>): string {
    let out = text;
    for (const { kind, pattern, kindOf, keepsFirstGroup } of this.detectors) {
      pattern.lastIndex = 0;
      out = out.replace(pattern, (_match: string, ...rest: unknown[]) => {
        const keep = keepsFirstGroup && typeof rest[0] === 'string' ? rest[0] : '';
        const shown = kindOf ? kindOf(keep) : kind;
        counts.set(shown, (counts.get(shown) ?? 0) + 1);
        return `${keep}[masked: ${shown}]`;
      });
    }
    return out;
  }
}

function findings(counts: Map<string, number>): MaskFinding[] {
  return [...counts].map(([kind, count]) => ({ kind, count }));
}

/** "2 × github-token, 1 × jwt": what the sampling Review shows was masked. */
export function describeFindings(found: readonly MaskFinding[]): string {
  return found.map((f) => `${f.count} × ${f.kind}`).join(', ');
}
