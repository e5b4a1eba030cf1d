/**
 * RFC 6570 URI templates, all four levels: the variables a template names (for the editor to ask
 * for) and its expansion. Written here rather than taken from npm because the common packages
 * (url-template, uri-templates, uri-template-lite) count a prefix `{x:1}` in UTF-16 units, cut
 * an emoji in half and throw a URIError; the RFC counts characters.
 */
export type TemplateValue = string | readonly string[] | Readonly<Record<string, string>> | undefined;

interface Operator {
  first: string;
  separator: string;
  /** `;`, `?` and `&` write `name=value`. */
  named: boolean;
  /** What a named variable with an empty value writes after its name. */
  ifEmpty: string;
  /** `+` and `#` let reserved characters and %-escapes through. */
  allowReserved: boolean;
}

const OPERATORS: Record<string, Operator> = {
  '': { first: '', separator: ',', named: false, ifEmpty: '', allowReserved: false },
  '+': { first: '', separator: ',', named: false, ifEmpty: '', allowReserved: true },
  '#': { first: '#', separator: ',', named: false, ifEmpty: '', allowReserved: true },
  '.': { first: '.', separator: '.', named: false, ifEmpty: '', allowReserved: false },
  '/': { first: '/', separator: '/', named: false, ifEmpty: '', allowReserved: false },
  ';': { first: ';', separator: ';', named: true, ifEmpty: '', allowReserved: false },
  '?': { first: '?', separator: '&', named: true, ifEmpty: '=', allowReserved: false },
  '&': { first: '&', separator: '&', named: true, ifEmpty: '=', allowReserved: false },
};

interface VarSpec {
  name: string;
  explode: boolean;
  /** Characters kept of a string value, from `:n`. */
  prefix?: number;
}

const EXPRESSION = /\{([^{}]*)\}/g;

function parseExpression(body: string): { operator: Operator; specs: VarSpec[] } {
  const op = body !== '' && body.charAt(0) in OPERATORS ? body.charAt(0) : '';
  const specs: VarSpec[] = [];
  for (const raw of body.slice(op.length).split(',')) {
    const m = /^\s*([^:*\s]+)\s*(?:(\*)|:(\d{1,4}))?\s*$/.exec(raw);
    if (m) specs.push({ name: m[1], explode: m[2] === '*', prefix: m[3] === undefined ? undefined : Number(m[3]) });
  }
  return { operator: OPERATORS[op], specs };
}

export function templateVariables(template: string): string[] {
  const names: string[] = [];
  for (const m of template.matchAll(EXPRESSION)) {
    for (const { name } of parseExpression(m[1]).specs) if (!names.includes(name)) names.push(name);
  }
  return names;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;
const utf8 = new TextEncoder();

/** %-encodes what the operator does not allow, byte by byte in UTF-8; never throws (a lone surrogate becomes U+FFFD). */
function encode(text: string, allowReserved: boolean): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (UNRESERVED.test(c) || (allowReserved && RESERVED.test(c))) out += c;
    else if (allowReserved && c === '%' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      // An existing %-escape is kept, not encoded a second time.
      out += text.slice(i, i + 3);
      i += 2;
    } else {
      const char = String.fromCodePoint(text.codePointAt(i)!);
      // A pair of surrogates is one character: skip its second half.
      i += char.length - 1;
      for (const byte of utf8.encode(char)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return out;
}

function isDefined(value: TemplateValue): value is NonNullable<TemplateValue> {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string') return true;
  if (Array.isArray(value)) return value.length > 0;
  return Object.values(value).some((v) => v !== undefined && v !== null);
}

function expandVariable(op: Operator, spec: VarSpec, value: NonNullable<TemplateValue>): string {
  const enc = (s: string) => encode(s, op.allowReserved);
  const named = (name: string, v: string) => (op.named ? `${enc(name)}${v === '' ? op.ifEmpty : `=${enc(v)}`}` : enc(v));
  if (typeof value === 'string') {
    // The prefix counts characters, not UTF-16 units, so a surrogate pair is never split.
    const kept = spec.prefix === undefined ? value : Array.from(value).slice(0, spec.prefix).join('');
    return named(spec.name, kept);
  }
  const pairs: Array<[string, string]> = Array.isArray(value)
    ? (value as readonly string[]).map((v) => ['', v])
    : Object.entries(value as Record<string, string>).filter(([, v]) => v !== undefined && v !== null);
  const isList = Array.isArray(value);
  if (!spec.explode) {
    const joined = pairs.map(([k, v]) => (isList ? enc(v) : `${enc(k)},${enc(v)}`)).join(',');
    return op.named ? `${enc(spec.name)}=${joined}` : joined;
  }
  if (isList) return pairs.map(([, v]) => named(spec.name, v)).join(op.separator);
  return pairs.map(([k, v]) => (op.named ? named(k, v) : `${enc(k)}=${enc(v)}`)).join(op.separator);
}

export function expandTemplate(template: string, values: Readonly<Record<string, TemplateValue>>): string {
  let out = '';
  let last = 0;
  for (const m of template.matchAll(EXPRESSION)) {
    out += encode(template.slice(last, m.index), true);
    last = m.index! + m[0].length;
    const { operator, specs } = parseExpression(m[1]);
    const parts = specs.flatMap((spec) => {
      const value = values[spec.name];
      return isDefined(value) ? [expandVariable(operator, spec, value)] : [];
    });
    if (parts.length) out += operator.first + parts.join(operator.separator);
  }
  return out + encode(template.slice(last), true);
}
