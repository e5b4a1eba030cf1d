import type { RequestId } from './types';

/** The error object of a JSON-RPC error response, as the classifier checked it. */
export interface WireError {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * One inbound (or outbound) value, judged once. Each case carries what its handler needs, so no
 * later step looks at the raw value again to ask "request or response?".
 */
export type ClassifiedMessage =
  | { kind: 'request'; id: RequestId; method: string; params?: unknown }
  | { kind: 'notification'; method: string; params?: unknown }
  | { kind: 'response'; id: RequestId | null; result?: unknown; error?: WireError }
  /** `id` is set when the value carried a usable one: a reply to it (or a failure of our request with that id) is due. */
  | { kind: 'invalid'; reason: string; id?: RequestId };

/** A JSON object: not null, not an array. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A JSON-RPC id (or a progress token, the same shape): a string or a finite number. */
export const isId = (v: unknown): v is RequestId => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

/**
 * Judges one parsed JSON value against JSON-RPC 2.0 as the seed describes it: requests carry an
 * id and a method, notifications a method and no id, responses an id and exactly one of
 * `result` or `error`. Batches (arrays) are not part of MCP since 2025-06-18 and are refused.
 */
export function classifyMessage(value: unknown): ClassifiedMessage {
  if (!isObject(value)) return { kind: 'invalid', reason: Array.isArray(value) ? 'batches are not supported' : 'not a JSON object' };
  const id = isId(value.id) ? value.id : undefined;
  if (value.jsonrpc !== '2.0') return { kind: 'invalid', reason: 'missing "jsonrpc": "2.0"', id };
  if ('id' in value && value.id !== null && id === undefined) return { kind: 'invalid', reason: 'id must be a string or a number' };
  if ('method' in value) {
    if (typeof value.method !== 'string') return { kind: 'invalid', reason: 'method must be a string', id };
    if ('params' in value && value.params !== undefined && typeof value.params !== 'object') {
      return { kind: 'invalid', reason: 'params must be an object or an array', id };
    }
    if ('result' in value || 'error' in value) return { kind: 'invalid', reason: 'a request cannot carry result or error', id };
    if (value.id === null) return { kind: 'invalid', reason: 'a request id cannot be null' };
    return id === undefined
      ? { kind: 'notification', method: value.method, params: value.params }
      : { kind: 'request', id, method: value.method, params: value.params };
  }
  if (!('id' in value)) return { kind: 'invalid', reason: 'neither a method nor an id' };
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if (hasResult === hasError) return { kind: 'invalid', reason: 'a response needs exactly one of result and error', id };
  if (hasError) {
    const error = value.error;
    if (!isObject(error) || typeof error.code !== 'number' || !Number.isInteger(error.code) || typeof error.message !== 'string') {
      return { kind: 'invalid', reason: 'error must have an integer code and a string message', id };
    }
    return { kind: 'response', id: id ?? null, error: error as unknown as WireError };
  }
  return { kind: 'response', id: id ?? null, result: value.result };
}

/**
 * The id of ours that an inbound value answers, if any: a response's, or the id of a broken value
 * that is no request (McpConnection fails our request with it). Transports that track their own
 * requests (HTTP) use this so that they and the connection agree on what answers what.
 */
export function answeredId(message: ClassifiedMessage): RequestId | undefined {
  switch (message.kind) {
    case 'response':
      return message.id ?? undefined;
    case 'invalid':
      return message.id;
    case 'request':
    case 'notification':
      return undefined;
  }
}
