import * as http from 'node:http';
import * as https from 'node:https';
import type { Readable } from 'node:stream';

/**
 * The HTTP transports' default fetch: one request on node:http(s) with keep-alive agents, answered
 * as a standard Response. Two reasons not to use the global fetch:
 * - it ends a body that stays silent for five minutes and gives up on headers after five, while an
 *   MCP stream is silent as long as the server has nothing to say (how long a request may take is
 *   the connection's business: its timeout and cancellation); node:http has no such limits, and
 *   TCP keep-alive still finds peers that vanished;
 * - its machinery (Request objects, header guards, the fetch algorithm, its streams) costs more
 *   client CPU per message than everything else on the path.
 * Editors that route extensions through a proxy patch node:http(s), so their settings still apply.
 */
const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};

/** These statuses carry no body, and Response refuses one for them. */
const NO_BODY = new Set([101, 204, 205, 304]);

/** Redirects followed before giving up, as fetch does. */
export const MAX_REDIRECTS = 20;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** What a request keeps when a redirect sends it to another origin: protocol headers, no credentials. */
const CROSS_ORIGIN_HEADERS = new Set(['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id', 'user-agent']);

/**
 * Follows redirects as fetch does, with three decisions of ours, for what an MCP request carries:
 * - 301, 302, 307 and 308 resend the same method and body (RFC 9110 allows it; fetch's rewrite of a
 *   POST into a GET on 301/302 would drop the JSON-RPC message), 303 turns into a GET without body;
 * - on a redirect to another origin only the protocol headers go along: `Authorization`, cookies
 *   and every configured header (which may hold a secret) stay behind, where fetch drops only
 *   `Authorization`;
 * - a redirect from https to http is refused, as is any other scheme.
 * `redirect: 'manual'` returns the 3xx itself, `'error'` rejects on one.
 */
export async function nodeFetch(input: URL | string, init: RequestInit = {}): Promise<Response> {
  let url = typeof input === 'string' ? new URL(input) : input;
  let method = (init.method ?? 'GET').toUpperCase();
  let headers = Object.fromEntries(new Headers(init.headers).entries());
  if (init.body != null && typeof init.body !== 'string') throw new TypeError('nodeFetch sends string bodies only');
  let body = init.body ?? undefined;
  for (let redirects = 0; ; redirects++) {
    const response = await sendOnce(url, method, headers, body, init.signal ?? undefined);
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || location === null || init.redirect === 'manual') return markUrl(response, url, redirects > 0);
    await response.body?.cancel();
    if (init.redirect === 'error')
      throw new TypeError(`HTTP ${response.status} redirect from ${url.origin}${url.pathname}, and redirects are refused`);
    if (redirects === MAX_REDIRECTS)
      throw new TypeError(`more than ${MAX_REDIRECTS} redirects, the last from ${url.origin}${url.pathname}`);
    const next = new URL(location, url);
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new TypeError(`refused a redirect to ${next.protocol}`);
    if (url.protocol === 'https:' && next.protocol === 'http:')
      throw new TypeError(`refused a redirect from https to http (${next.origin})`);
    if (next.origin !== url.origin)
      headers = Object.fromEntries(Object.entries(headers).filter(([name]) => CROSS_ORIGIN_HEADERS.has(name)));
    if (response.status === 303 && method !== 'GET' && method !== 'HEAD') {
      method = 'GET';
      body = undefined;
      delete headers['content-type'];
    }
    url = next;
  }
}

/** Like fetch's: the URL the answer came from, and whether a redirect led there. */
function markUrl(response: Response, url: URL, redirected: boolean): Response {
  Object.defineProperties(response, { url: { value: url.href }, redirected: { value: redirected } });
  return response;
}

function sendOnce(
  url: URL,
  method: string,
  requestHeaders: Record<string, string>,
  body: string | undefined,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const headers = { ...requestHeaders };
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  const client = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
  if (!client) return Promise.reject(new TypeError(`unsupported protocol ${url.protocol}`));
  return new Promise((resolve, reject) => {
    const request = client.request(url, { method, headers, agent: agents[url.protocol as 'http:' | 'https:'], signal }, (reply) => {
      const replyHeaders = new Headers();
      for (const [name, value] of Object.entries(reply.headers)) {
        if (Array.isArray(value)) for (const v of value) replyHeaders.append(name, v);
        else if (value !== undefined) replyHeaders.set(name, value);
      }
      const status = reply.statusCode ?? 0;
      const statusText = reply.statusMessage ?? '';
      if (NO_BODY.has(status) || method === 'HEAD') {
        reply.resume();
        resolve(new Response(null, { status, statusText, headers: replyHeaders }));
      } else {
        resolve(new Response(webStream(reply), { status, statusText, headers: replyHeaders }));
      }
    });
    request.once('error', reject);
    request.end(body);
  });
}

/**
 * A web stream over a Node stream, with backpressure. (Node 20's Readable.toWeb throws "Controller
 * is already closed" when the web side is cancelled while data is still arriving.)
 */
function webStream(body: Readable): ReadableStream<Uint8Array> {
  let done = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      body.on('data', (chunk: Buffer) => {
        if (done) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) body.pause();
      });
      body.once('end', () => {
        if (done) return;
        done = true;
        controller.close();
      });
      body.once('error', (error) => {
        if (done) return;
        done = true;
        controller.error(error);
      });
      // A reply cut off by an abort or a dropped connection ends in 'close' without 'end'.
      body.once('close', () => {
        if (done) return;
        done = true;
        controller.error(new Error('the connection closed before the reply ended'));
      });
    },
    pull() {
      body.resume();
    },
    cancel() {
      done = true;
      body.destroy();
    },
  });
}
