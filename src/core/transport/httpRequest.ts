import type { AuthChallenge, HttpAuthProvider } from '../auth/provider';
import { ErrorCode, McpError } from '../protocol/errors';
import { nodeFetch } from './nodeFetch';

/** How to reach an MCP server over HTTP; shared by every HTTP transport. */
export interface HttpServerParams {
  url: string;
  /** Sent on every request. */
  headers?: Record<string, string>;
  authProvider?: HttpAuthProvider;
  /** Injectable for tests and for hosts with their own networking; node:http (nodeFetch.ts) by default. */
  fetch?: typeof fetch;
  /** The largest JSON body or SSE event accepted; larger ones are refused with a clear error. */
  maxMessageBytes?: number;
}

/** As for stdio: a 10 MB tool result with JSON escaping fits. */
export const DEFAULT_MAX_HTTP_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Tries per message when the server keeps asking for credentials: the first, then two after challenges. */
export const MAX_AUTH_TRIES = 3;

export const ACCEPT_JSON_OR_SSE = 'application/json, text/event-stream';

const defaultFetch = nodeFetch;

/**
 * The requests of one transport that are still in flight, each with an AbortController of its own,
 * so closing can abort them all. A shared signal would do the same, but every request adds an
 * abort listener to its signal (fetch dropped it only when the request was garbage collected):
 * thousands piled up on a busy session, and Node warned about a leak.
 */
export class InFlightRequests {
  private readonly controllers = new Set<AbortController>();
  private aborted = false;

  /** A signal for one request (or one stream with its reconnections); release it when done. */
  open(): AbortController {
    const controller = new AbortController();
    if (this.aborted) controller.abort();
    else this.controllers.add(controller);
    return controller;
  }

  release(controller: AbortController): void {
    this.controllers.delete(controller);
  }

  abortAll(): void {
    this.aborted = true;
    for (const controller of this.controllers) controller.abort();
    this.controllers.clear();
  }

  get size(): number {
    return this.controllers.size;
  }
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: URL;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export function parseServerUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw McpError.invalidParams(`Not a valid server URL: ${url}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw McpError.invalidParams(`The server URL must be http or https: ${shownUrl(parsed)}`);
  // fetch refuses them, and its error would repeat them in the log.
  if (parsed.username || parsed.password) {
    throw McpError.invalidParams(
      `The server URL must not carry a user name or password; send credentials in a header: ${shownUrl(parsed)}`,
    );
  }
  return parsed;
}

/**
 * One HTTP request with the configured headers and authorization. On 401, or 403 with
 * `insufficient_scope`, the auth provider is told and, if it says so, the request is sent again,
 * at most {@link MAX_AUTH_TRIES} times in all. Network failures and refused authorization become
 * McpErrors naming the URL; other statuses are left to the caller.
 */
export async function sendHttp(params: HttpServerParams, serverUrl: URL, request: HttpRequest): Promise<Response> {
  const doFetch = params.fetch ?? defaultFetch;
  for (let attempt = 1; ; attempt++) {
    const headers = mergeHeaders(params.headers, request.headers);
    const authorization = await authorizationFor(params.authProvider, serverUrl);
    if (authorization !== undefined) {
      // The provider's header replaces a configured one, whatever its case.
      for (const name of Object.keys(headers)) if (name.toLowerCase() === 'authorization') delete headers[name];
      headers.Authorization = authorization;
    }
    let response: Response;
    try {
      response = await doFetch(request.url, { method: request.method, headers, body: request.body, signal: request.signal });
    } catch (error) {
      throw networkError(request, error);
    }
    const challenge = challengeOf(response, serverUrl);
    if (!challenge) return response;
    await discard(response);
    const what = `HTTP ${response.status} from ${request.method} ${shownUrl(request.url)}`;
    if (!params.authProvider) {
      throw new McpError(
        ErrorCode.ConnectionClosed,
        `${what}: the server requires authorization and none is configured`,
        httpData(request, response),
      );
    }
    if (attempt >= MAX_AUTH_TRIES) {
      throw new McpError(
        ErrorCode.ConnectionClosed,
        `${what}: still refused after ${MAX_AUTH_TRIES} tries with fresh credentials`,
        httpData(request, response),
      );
    }
    let retry: boolean;
    try {
      retry = await params.authProvider.onChallenge(challenge);
    } catch (error) {
      throw new McpError(
        ErrorCode.ConnectionClosed,
        `${what}: authorization failed: ${(error as Error)?.message ?? String(error)}`,
        httpData(request, response),
      );
    }
    if (!retry) throw new McpError(ErrorCode.ConnectionClosed, `${what}: authorization was not granted`, httpData(request, response));
  }
}

async function authorizationFor(provider: HttpAuthProvider | undefined, serverUrl: URL): Promise<string | undefined> {
  if (!provider) return undefined;
  try {
    return await provider.authorizationHeader(serverUrl);
  } catch (error) {
    throw new McpError(
      ErrorCode.ConnectionClosed,
      `Could not get authorization for ${shownUrl(serverUrl)}: ${(error as Error)?.message ?? String(error)}`,
    );
  }
}

function challengeOf(response: Response, serverUrl: URL): AuthChallenge | undefined {
  const wwwAuthenticate = response.headers.get('www-authenticate');
  if (response.status === 401) return { serverUrl, status: 401, wwwAuthenticate };
  if (response.status === 403 && wwwAuthenticate && /error\s*=\s*"?insufficient_scope"?/i.test(wwwAuthenticate)) {
    return { serverUrl, status: 403, wwwAuthenticate };
  }
  return undefined;
}

function httpData(request: HttpRequest, response?: Response): { url: string; method: string; status?: number } {
  return { url: shownUrl(request.url), method: request.method, ...(response ? { status: response.status } : {}) };
}

/** The real cause (ECONNREFUSED, ENOTFOUND) is the error's code, or one level down with fetch. */
function networkError(request: HttpRequest, error: unknown): McpError {
  const e = error as { name?: string; message?: string; code?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'AbortError') return McpError.connectionClosed(`${request.method} ${shownUrl(request.url)} was aborted`);
  const cause = e?.cause?.message ?? e?.message ?? String(error);
  return new McpError(ErrorCode.ConnectionClosed, `Could not reach ${shownUrl(request.url)} (${request.method}): ${cause}`, {
    ...httpData(request),
    ...((e?.cause?.code ?? e?.code) ? { cause: e?.cause?.code ?? e?.code } : {}),
  });
}

/** A clear error for a status we cannot use, with the start of the body (servers often explain there). */
export async function statusError(request: HttpRequest, response: Response): Promise<McpError> {
  let detail = '';
  try {
    const text = (await readBodyText(response, 4096, request)).trim();
    if (text) detail = `: ${text.length > 300 ? `${text.slice(0, 300)}…` : text}`;
  } catch {
    // The status says enough.
  }
  const reason = response.statusText ? ` ${response.statusText}` : '';
  return McpError.httpStatus(
    `HTTP ${response.status}${reason} from ${request.method} ${shownUrl(request.url)}${detail}`,
    response.status,
    httpData(request, response),
  );
}

/** Reads a whole body, refusing one over `limit` bytes without buffering it. */
export async function readBodyText(response: Response, limit: number, request: HttpRequest): Promise<string> {
  const tooLarge = () =>
    McpError.oversize(
      `The reply to ${request.method} ${shownUrl(request.url)} exceeds the limit of ${limit} bytes; it was dropped`,
      limit,
      httpData(request, response),
    );
  return (await readBodyBytes(response, limit, tooLarge)).toString('utf8');
}

/**
 * Reads a whole body as bytes. One that says (Content-Length) or turns out to be over `limit`
 * bytes is not buffered: it is dropped and `tooLarge()` is thrown.
 */
export async function readBodyBytes(response: Response, limit: number, tooLarge: () => Error): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await discard(response);
    throw tooLarge();
  }
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** Frees the connection of a response we will not read. */
export async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

export function mediaType(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
}

/** Query parameters whose values may be credentials; masked wherever a URL is shown. */
const SECRET_QUERY = /token|key|secret|password|auth|sig|session|code/i;

/** A URL fit for logs and error messages: no user info, no credential-looking query values. */
export function shownUrl(url: URL): string {
  if (!url.username && !url.password && ![...url.searchParams.keys()].some((k) => SECRET_QUERY.test(k))) return url.href;
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  for (const key of [...copy.searchParams.keys()]) if (SECRET_QUERY.test(key)) copy.searchParams.set(key, '***');
  return copy.href;
}

/** Our protocol headers win over configured ones of the same name, whatever the case. */
function mergeHeaders(configured: Record<string, string> | undefined, ours: Record<string, string> | undefined): Record<string, string> {
  const merged: Record<string, string> = {};
  const taken = new Set(Object.keys(ours ?? {}).map((name) => name.toLowerCase()));
  for (const [name, value] of Object.entries(configured ?? {})) if (!taken.has(name.toLowerCase())) merged[name] = value;
  return { ...merged, ...ours };
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
