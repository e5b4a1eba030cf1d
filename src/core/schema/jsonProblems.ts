import type { Node, ParseError } from 'jsonc-parser';
import { jsonc } from '../jsonc';
import type { SchemaCheck } from './validator';

/** A problem at a place in a JSON text (offsets in UTF-16 code units, as editors count). */
export interface TextProblem {
  offset: number;
  length: number;
  message: string;
}

interface AjvLikeError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/**
 * Reads an argument object typed as JSON and checks it: the object, or every problem with where
 * it is (a syntax error at its character, a schema error at the value it is about), so an
 * editor can mark them.
 */
export function checkJsonArguments(
  text: string,
  check: (value: unknown) => SchemaCheck,
): { value: Record<string, unknown> } | { problems: TextProblem[] } {
  const { parseTree, printParseErrorCode } = jsonc();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const errors: ParseError[] = [];
    parseTree(text, errors, { disallowComments: true, allowTrailingComma: false });
    const problems = errors.map((err) => ({
      offset: err.offset,
      length: Math.max(1, err.length),
      message: `not JSON: ${printParseErrorCode(err.error)}`,
    }));
    return { problems: problems.length ? problems : [{ offset: 0, length: 1, message: `not JSON: ${(e as Error).message}` }] };
  }
  const root = parseTree(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      problems: [{ offset: root?.offset ?? 0, length: Math.max(1, root?.length ?? 1), message: 'the arguments must be a JSON object' }],
    };
  }
  const result = check(value);
  if (result.ok) return { value: value as Record<string, unknown> };
  if (result.kind === 'unusableSchema') return { value: value as Record<string, unknown> };
  const errors = (result.errors ?? []) as AjvLikeError[];
  if (!errors.length) return { problems: [{ offset: root?.offset ?? 0, length: 1, message: result.message }] };
  return { problems: errors.map((e) => problemAt(root, e)) };
}

function problemAt(root: Node | undefined, e: AjvLikeError): TextProblem {
  const path = (e.instancePath ?? '')
    .split('/')
    .slice(1)
    .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((seg) => (/^\d+$/.test(seg) ? Number(seg) : seg));
  const node = root && (path.length ? jsonc().findNodeAtLocation(root, path) : root);
  const where = e.instancePath || '(root)';
  const extra = e.params && 'allowedValues' in e.params ? `: ${(e.params.allowedValues as unknown[]).join(', ')}` : '';
  const message = `${where} ${e.message ?? 'is invalid'}${extra}`;
  if (!node) return { offset: root?.offset ?? 0, length: 1, message };
  // An object missing a key: mark its opening brace, not the whole object.
  if (e.keyword === 'required' || node.type === 'object' || node.type === 'array') return { offset: node.offset, length: 1, message };
  return { offset: node.offset, length: Math.max(1, node.length), message };
}
