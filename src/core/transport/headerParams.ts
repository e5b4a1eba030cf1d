import type { Tool } from '../protocol/types';

/** RFC 9110 `token`: what may follow `Mcp-Param-` in a header name. */
const TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
/** Values sent as they are: printable ASCII without surrounding whitespace (or nothing). */
const PLAIN_VALUE = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;
/** The types a header may mirror (2026-07-28 `x-mcp-header`): not number, whose text form is not one value, nor null, object or array. */
const HEADER_TYPES = new Set(['string', 'integer', 'boolean']);

interface AnnotatedProperty {
  type?: unknown;
  'x-mcp-header'?: unknown;
}

function annotated(tool: Tool | undefined): Array<[property: string, header: unknown, schema: AnnotatedProperty]> {
  const properties = (tool?.inputSchema as { properties?: Record<string, AnnotatedProperty> } | undefined)?.properties;
  if (!properties || typeof properties !== 'object') return [];
  return Object.entries(properties)
    .filter(([, schema]) => schema && typeof schema === 'object' && 'x-mcp-header' in schema)
    .map(([property, schema]) => [property, schema['x-mcp-header'], schema]);
}

/**
 * Why a tool's `x-mcp-header` annotations (2026-07-28 standard headers) cannot be honoured, or
 * undefined when they can: each names a header token, no two the same (headers ignore case), on
 * a string, integer or boolean property.
 */
export function invalidHeaderAnnotations(tool: Tool): string | undefined {
  const seen = new Set<string>();
  for (const [property, header, schema] of annotated(tool)) {
    if (typeof header !== 'string' || !TOKEN.test(header))
      return `x-mcp-header of '${property}' is ${JSON.stringify(header)}, not a header name`;
    const key = header.toLowerCase();
    if (seen.has(key)) return `x-mcp-header ${JSON.stringify(header)} is used twice`;
    seen.add(key);
    if (schema.type !== undefined && !HEADER_TYPES.has(schema.type as string))
      return `x-mcp-header of '${property}' is on a property of type ${JSON.stringify(schema.type)}`;
  }
  return undefined;
}

/** One header value: as it is when plain ASCII, else the RFC 2047-style `=?base64?…?=` of its UTF-8. */
export function headerValue(value: string): string {
  return PLAIN_VALUE.test(value) ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** The `Mcp-Param-{Name}` headers of one tools/call: the annotated arguments present, as strings. */
export function headerParamsOf(tool: Tool | undefined, args: unknown): Record<string, string> | undefined {
  if (!args || typeof args !== 'object') return undefined;
  const headers: Record<string, string> = {};
  for (const [property, header] of annotated(tool)) {
    const value = (args as Record<string, unknown>)[property];
    if (typeof header !== 'string' || value === undefined || value === null) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      headers[`Mcp-Param-${header}`] = headerValue(String(value));
  }
  return Object.keys(headers).length ? headers : undefined;
}
