import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { canonicalHost, domainPattern, isSpecialAddress } from '../../src/core/servers/sandbox/domains';
import { MAX_PROXY_CONNECTIONS, startProxy, type BlockedConnection, type RunningProxy } from '../../src/core/servers/sandbox/proxy';

/** Sends raw bytes to the proxy and collects everything it answers until it closes (or `until` matches). */
function raw(target: net.NetConnectOpts, text: string, until?: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(target);
    let got = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      got += chunk;
      if (until?.test(got)) socket.destroy();
    });
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
    socket.write(text);
  });
}

describe('the sandbox network proxy (hostile requests, an injected resolver)', () => {
  let origin: http.Server;
  let originPort: number;
  /** What the origin server on 127.0.0.1 was asked: "Host path". */
  const seen: string[] = [];
  let proxy: RunningProxy;
  const blocked: BlockedConnection[] = [];
  let dir: string;
  let socketPath: string;
  const at = () => ({ path: socketPath });

  // Every name resolves to the origin on 127.0.0.1, so a refusal is the proxy's, never a failed lookup.
  const names: Record<string, string[]> = {
    'allowed.test': ['127.0.0.1'],
    'allowed.test.evil.test': ['127.0.0.1'],
    'evil.test': ['127.0.0.1'],
    'api.wild.test': ['127.0.0.1'],
    'wild.test': ['127.0.0.1'],
    'public.wild.test': ['93.184.216.34'],
    'mixed.wild.test': ['93.184.216.34', '127.0.0.1'],
    'blocked.wild.test': ['93.184.216.34'],
    'meta.test': ['169.254.169.254'],
    'xn--bcher-kva.test': ['127.0.0.1'],
  };

  before(async () => {
    origin = http.createServer((req, res) => {
      seen.push(`${req.headers.host} ${req.url}`);
      res.end('origin answered');
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    originPort = (origin.address() as net.AddressInfo).port;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-proxy-test-'));
    socketPath = path.join(dir, 'proxy.sock');
    proxy = await startProxy({
      listen: { path: socketPath },
      rules: {
        allowed: ['allowed.test', '*.wild.test', 'meta.test', 'xn--bcher-kva.test'],
        denied: ['blocked.wild.test', '169.254.169.254'],
      },
      resolve: (host) => Promise.resolve(names[host] ?? []),
      onBlocked: (b) => blocked.push(b),
    });
  });
  after(async () => {
    await proxy?.close();
    origin?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    seen.length = 0;
    blocked.length = 0;
  });

  const connect = (authority: string) =>
    raw(at(), `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\nGET /tunnelled HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`);
  const statusOf = (answer: string) => answer.split('\r\n')[0];

  it('plain HTTP: exactly one framed request reaches the origin, on one connection; a second request in the body stays body', async () => {
    const received: string[] = [];
    let connections = 0;
    const rawOrigin = net.createServer((c) => {
      connections++;
      let got = '';
      c.on('data', (d) => {
        got += String(d);
        if (/\r\n0\r\n\r\n$|^[^]*\r\n\r\n$/.test(got) && !/transfer-encoding: chunked\r\n\r\n$/i.test(got)) {
          received.push(got);
          c.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok');
        }
      });
    });
    await new Promise<void>((resolve) => rawOrigin.listen(0, '127.0.0.1', resolve));
    const port = (rawOrigin.address() as net.AddressInfo).port;
    try {
      const smuggled = 'GET /smuggled HTTP/1.1\r\nHost: internal.test\r\n\r\n';
      const answer = await raw(
        at(),
        `GET http://allowed.test:${port}/first HTTP/1.1\r\nHost: allowed.test:${port}\r\nTransfer-Encoding: chunked\r\n\r\n` +
          `${Buffer.byteLength(smuggled).toString(16)}\r\n${smuggled}\r\n0\r\n\r\n`,
        /\r\n\r\nok$/,
      );
      assert.match(statusOf(answer), /^HTTP\/1.1 200/);
      assert.equal(connections, 1, 'one connection to the origin: the one the proxy dialled and checked');
      assert.equal(received.length, 1);
      assert.match(received[0], /^GET \/first HTTP\/1.1\r\n/);
      assert.match(received[0], /\r\ntransfer-encoding: chunked\r\n/i, 'the body is framed');
      assert.equal(received[0].match(/HTTP\/1.1\r\n/g)?.length, 2, 'the smuggled request line arrives as body bytes, inside a chunk');
    } finally {
      rawOrigin.close();
    }
  });

  it(`at most ${MAX_PROXY_CONNECTIONS} connections at once: past that, new ones are closed unanswered`, async () => {
    const held: net.Socket[] = [];
    const tunnel = () =>
      new Promise<string>((resolve) => {
        const socket = net.connect(at(), () => socket.write(`CONNECT allowed.test:${originPort} HTTP/1.1\r\nHost: x\r\n\r\n`));
        held.push(socket);
        socket.once('data', (d) => resolve(String(d).split('\r\n')[0]));
        socket.once('close', () => resolve('closed'));
        socket.on('error', () => resolve('closed'));
      });
    try {
      const answers = await Promise.all(Array.from({ length: MAX_PROXY_CONNECTIONS + 20 }, tunnel));
      assert.equal(answers.filter((a) => a === 'HTTP/1.1 200 Connection Established').length, MAX_PROXY_CONNECTIONS);
      assert.equal(answers.filter((a) => a === 'closed').length, 20);
    } finally {
      for (const s of held) s.destroy();
    }
    // Once they are gone, new ones are served again.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(statusOf(await connect(`allowed.test:${originPort}`)), 'HTTP/1.1 200 Connection Established');
  });

  it('CONNECT to an allowed name tunnels to its address, whatever its case or trailing dot', async () => {
    for (const name of ['allowed.test', 'ALLOWED.Test.']) {
      const answer = await connect(`${name}:${originPort}`);
      assert.equal(statusOf(answer), 'HTTP/1.1 200 Connection Established');
      assert.match(answer, /origin answered/);
    }
    assert.deepEqual(blocked, []);
  });

  it('CONNECT to a loopback address in any spelling is refused and reported, the origin never reached', async () => {
    for (const target of ['127.0.0.1', '[::1]', '2130706433', '0x7f.1', '[::ffff:127.0.0.1]', 'localhost']) {
      const answer = await connect(`${target}:${originPort}`);
      assert.match(statusOf(answer), /^HTTP\/1.1 403/, target);
    }
    assert.deepEqual(seen, []);
    assert.deepEqual(
      blocked.map((b) => `${b.host}:${b.port} ${b.reason}`),
      ['127.0.0.1', '[::1]', '127.0.0.1', '127.0.0.1', '[::ffff:7f00:1]', 'localhost'].map((h) => `${h}:${originPort} not-allowed`),
    );
  });

  it('names that merely contain an allowed one are refused by name: suffixes, user info, fragments', async () => {
    assert.match(statusOf(await connect(`allowed.test.evil.test:${originPort}`)), /403/);
    assert.match(statusOf(await connect(`allowed.test@evil.test:${originPort}`)), /400/);
    for (const url of [`http://evil.test:${originPort}#@allowed.test/`, `http://allowed.test@evil.test:${originPort}/`]) {
      const answer = await raw(at(), `GET ${url} HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n`);
      assert.match(statusOf(answer), /^HTTP\/1.1 (403|400)/, url);
    }
    assert.deepEqual(seen, []);
    assert.ok(
      blocked.every((b) => b.host === 'allowed.test.evil.test' || b.host === 'evil.test'),
      JSON.stringify(blocked),
    );
  });

  it('a name only a wildcard allows may not resolve to a loopback or private address (rebinding); deny wins over allow', async () => {
    assert.match(statusOf(await connect(`api.wild.test:${originPort}`)), /403/);
    assert.match(statusOf(await connect(`mixed.wild.test:${originPort}`)), /403/);
    assert.match(statusOf(await connect(`blocked.wild.test:${originPort}`)), /403/);
    // *.wild.test does not match wild.test itself.
    assert.match(statusOf(await connect(`wild.test:${originPort}`)), /403/);
    // An exactly allowed name resolving to a denied address.
    assert.match(statusOf(await connect(`meta.test:${originPort}`)), /403/);
    assert.deepEqual(
      blocked.map((b) => `${b.host} ${b.reason} ${b.address ?? ''}`),
      [
        'api.wild.test private-address 127.0.0.1',
        'mixed.wild.test private-address 127.0.0.1',
        'blocked.wild.test denied ',
        'wild.test not-allowed ',
        'meta.test denied 169.254.169.254',
      ],
    );
    assert.deepEqual(seen, []);
  });

  it('ports outside 1-65535 or with junk are a bad request, not a connection', async () => {
    for (const target of ['allowed.test:0', 'allowed.test:99999', 'allowed.test:443abc', 'allowed.test:', 'allowed.test']) {
      assert.match(statusOf(await connect(target)), /^HTTP\/1.1 400/, target);
    }
    assert.deepEqual(seen, []);
  });

  it('international names: the punycode of an allowed name passes, a look-alike does not', async () => {
    assert.match(statusOf(await connect(`xn--bcher-kva.test:${originPort}`)), /200/);
    const lookalike = await raw(at(), `GET http://\u0430llowed.test:${originPort}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    assert.match(statusOf(lookalike), /^HTTP\/1.1 (403|400)/);
    assert.equal(domainPattern('Bücher.test'), 'xn--bcher-kva.test');
  });

  it('plain HTTP is forwarded with the Host the proxy judged, not the one the client wrote', async () => {
    const answer = await raw(
      at(),
      `GET http://allowed.test:${originPort}/path?q=1 HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: x\r\nConnection: close\r\n\r\n`,
    );
    assert.match(statusOf(answer), /^HTTP\/1.1 200/);
    assert.match(answer, /origin answered/);
    assert.deepEqual(seen, [`allowed.test:${originPort} /path?q=1`]);
    const https = await raw(at(), `GET https://allowed.test:${originPort}/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n`);
    assert.match(statusOf(https), /^HTTP\/1.1 400/);
    const originForm = await raw(at(), `GET / HTTP/1.1\r\nHost: allowed.test:${originPort}\r\nConnection: close\r\n\r\n`);
    assert.match(statusOf(originForm), /^HTTP\/1.1 400/);
  });

  it('host and pattern reading', () => {
    assert.equal(canonicalHost('Example.COM.'), 'example.com');
    assert.equal(canonicalHost('example.com..'), undefined);
    assert.equal(canonicalHost('a b.com'), undefined);
    assert.equal(canonicalHost('example.com:443'), undefined);
    assert.equal(domainPattern('*.Example.com'), '*.example.com');
    assert.equal(domainPattern('*.127.0.0.1'), undefined);
    assert.equal(domainPattern('https://example.com'), undefined);
    assert.equal(domainPattern('::1'), '[::1]');
    for (const special of [
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '::',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:10.0.0.1',
      '64:ff9b::7f00:1',
    ])
      assert.ok(isSpecialAddress(special), special);
    for (const open of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']) assert.ok(!isSpecialAddress(open), open);
  });
});
