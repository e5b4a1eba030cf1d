import type { RequestId } from '../protocol/types';

export type ClassifiedMessage =
  { kind: 'request'; id: RequestId; method: string } | { kind: 'notification'; method: string } | { kind: 'response'; id: RequestId | null } | { kind: 'invalid'; reason: string; id?: RequestId };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is RequestId => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

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
    return id === undefined ? { kind: 'notification', method: value.method } : { kind: 'request', id, method: value.method };
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
  }
  return { kind: 'response', id: id ?? null };
}
