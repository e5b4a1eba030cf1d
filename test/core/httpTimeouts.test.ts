// Node's fetch gives up on headers and on a silent body after five minutes; an MCP stream may stay
// silent for much longer. These tests shrink the global dispatcher's limits to 100 ms so the point can
// be shown quickly: plain fetch fails, while sendHttp (the default fetch of every HTTP transport) does not.
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendHttp } from '../../src/core/transport/httpRequest';

// undici checks its timers about once a second, so the silence is well past a few ticks.
const SILENCE_MS = 2000;
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
type Slot = Record<symbol, { constructor: new (opts: object) => unknown } | undefined>;

describe('HTTP requests without undici time limits', () => {
  let server: http.Server;
  let base: string;
  let saved: unknown;

  before(async () => {
    // Slow headers on /slow-headers; headers, then SILENCE_MS of silence, then the rest on /silent-body.
    server = http.createServer((req, res) => {
      if (req.url === '/ok') {
        res.end('ok');
      } else if (req.url === '/slow-headers') {
        setTimeout(() => res.end('late'), SILENCE_MS);
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first ');
        setTimeout(() => res.end('second'), SILENCE_MS);
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // fetch installs Node's own agent as the global dispatcher when it first runs.
    await (await fetch(`${base}/ok`)).text();
    const slot = globalThis as unknown as Slot;
    saved = slot[GLOBAL_DISPATCHER];
    const Agent = slot[GLOBAL_DISPATCHER]!.constructor;
    (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER] = new Agent({ headersTimeout: 100, bodyTimeout: 100 });
  });

  after(async () => {
    (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER] = saved;
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const timedOut = (code: string) => (e: Error & { cause?: { code?: string } }) => e.cause?.code === code;

  it('waits for late headers, where plain fetch gives up', async () => {
    const url = new URL(`${base}/slow-headers`);
    const [plain, ours] = await Promise.allSettled([fetch(url), sendHttp({ url: url.href }, url, { method: 'GET', url })]);
    assert.equal(plain.status, 'rejected', 'the short limit must bite plain fetch');
    assert.ok(timedOut('UND_ERR_HEADERS_TIMEOUT')(plain.reason), String(plain.reason?.cause ?? plain.reason));
    assert.equal(ours.status, 'fulfilled', String((ours as PromiseRejectedResult).reason));
    assert.equal(await ours.value.text(), 'late');
  });

  it('reads a body through a silence longer than the limit, where plain fetch gives up', async () => {
    const url = new URL(`${base}/silent-body`);
    const [plain, ours] = await Promise.allSettled([
      fetch(url).then((r) => r.text()),
      sendHttp({ url: url.href }, url, { method: 'GET', url }).then((r) => r.text()),
    ]);
    assert.equal(plain.status, 'rejected', 'the short limit must bite plain fetch');
    assert.ok(timedOut('UND_ERR_BODY_TIMEOUT')(plain.reason), String(plain.reason?.cause ?? plain.reason));
    assert.equal(ours.status, 'fulfilled', String((ours as PromiseRejectedResult).reason));
    assert.equal(ours.value, 'first second');
  });
});
