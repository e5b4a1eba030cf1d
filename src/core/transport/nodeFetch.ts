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

export function nodeFetch(input: URL | string, init: RequestInit = {}): Promise<Response> {
  const url = typeof input === 'string' ? new URL(input) : input;
  const method = (init.method ?? 'GET').toUpperCase();
  const headers = Object.fromEntries(new Headers(init.headers).entries());
  if (init.body != null && typeof init.body !== 'string') return Promise.reject(new TypeError('nodeFetch sends string bodies only'));
  const body = init.body ?? undefined;
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  const client = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
  if (!client) return Promise.reject(new TypeError(`unsupported protocol ${url.protocol}`));
  return new Promise((resolve, reject) => {
    const request = client.request(url, { method, headers, agent: agents[url.protocol as 'http:' | 'https:'], signal: init.signal ?? undefined }, (reply) => {
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
