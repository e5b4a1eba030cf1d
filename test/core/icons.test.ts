import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkIconSrc, chooseIcons, fetchIcon, IconResolver, MAX_ICON_BYTES, sniffImage, type Icon } from '../../src/core';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46]);
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1');
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x1a, 0, 0, 0]), Buffer.from('WEBPVP8 ')]);
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
const dataUri = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;

describe('icons: sniffing', () => {
  it('knows the four raster types by their first bytes, and nothing else', () => {
    assert.equal(sniffImage(PNG), 'image/png');
    assert.equal(sniffImage(JPEG), 'image/jpeg');
    assert.equal(sniffImage(GIF), 'image/gif');
    assert.equal(sniffImage(WEBP), 'image/webp');
    assert.equal(sniffImage(SVG), undefined);
    assert.equal(sniffImage(Buffer.from('<html><body>png</body></html>')), undefined);
    assert.equal(sniffImage(PNG.subarray(0, 4)), undefined, 'a truncated signature');
    assert.equal(sniffImage(Buffer.alloc(0)), undefined);
  });
});

describe('icons: which src is accepted', () => {
  it('accepts data: URIs of raster images whose bytes are what they say', () => {
    const ok = checkIconSrc(dataUri('image/png', PNG));
    assert.equal(ok.kind, 'data');
    assert.equal(ok.kind === 'data' && ok.mimeType, 'image/png');
    assert.equal(checkIconSrc(dataUri('IMAGE/JPEG', JPEG)).kind, 'data');
    assert.equal(checkIconSrc(dataUri('image/webp', WEBP)).kind, 'data');
  });
  it('refuses SVG, other types, mislabelled bytes and oversized data', () => {
    assert.match(reason(dataUri('image/svg+xml', SVG)), /image\/svg\+xml is not an allowed/);
    assert.match(reason(`data:image/svg+xml,${encodeURIComponent(SVG.toString())}`), /not an allowed/);
    assert.match(reason(dataUri('text/html', PNG)), /not an allowed/);
    assert.match(reason(dataUri('image/png', SVG)), /not a PNG, JPEG, GIF or WebP/, 'a PNG label on SVG bytes');
    assert.match(reason(dataUri('image/png', Buffer.concat([PNG, Buffer.alloc(MAX_ICON_BYTES)]))), /too long|larger/);
    assert.match(reason('data:image/png;base64'), /malformed/);
  });
  it('accepts https: and refuses every other scheme, and URLs with credentials', () => {
    assert.equal(checkIconSrc('https://example.com/icon.png').kind, 'fetch');
    for (const src of [
      'http://example.com/icon.png',
      'file:///icon.png',
      'javascript:alert(1)',
      'command:workbench.action.quit',
      'vscode://x/y',
      'ftp://example.com/i.png',
      'blob:https://example.com/1',
    ]) {
      assert.match(reason(src), /scheme is not allowed/, src);
    }
    assert.match(reason('https://user:secret@example.com/i.png'), /credentials/);
    assert.match(reason('icon.png'), /not an absolute URL/);
    assert.match(reason(42), /not a string/);
  });
  it('refuses addresses on the local machine or network, written as such', () => {
    for (const src of [
      'https://localhost/i.png',
      'https://127.0.0.1/i.png',
      'https://10.1.2.3/i.png',
      'https://172.20.0.1/i.png',
      'https://192.168.1.1/i.png',
      'https://169.254.169.254/latest',
      'https://[::1]/i.png',
      'https://[fd00::1]/i.png',
      'https://[fe80::1]/i.png',
      'https://[::ffff:127.0.0.1]/i.png',
      'https://0.0.0.0/i.png',
      'https://a.localhost/i.png',
    ]) {
      assert.match(reason(src), /local or private address/, src);
    }
    for (const src of ['https://172.32.0.1/i.png', 'https://8.8.8.8/i.png', 'https://[2001:db8::1]/i.png', 'https://example.com/i.png']) {
      assert.equal(checkIconSrc(src).kind, 'fetch', src);
    }
  });
  it('accepts http: on loopback only when a test asks for it', () => {
    assert.equal(checkIconSrc('http://127.0.0.1:1/i.png').kind, 'refused');
    assert.equal(checkIconSrc('http://127.0.0.1:1/i.png', { allowLoopbackHttp: true }).kind, 'fetch');
    assert.equal(checkIconSrc('http://example.com/i.png', { allowLoopbackHttp: true }).kind, 'refused');
  });
});

function reason(src: unknown): string {
  const r = checkIconSrc(src);
  return r.kind === 'refused' ? r.reason : `accepted as ${r.kind}`;
}

describe('icons: choosing by theme and size', () => {
  const icon = (src: string, extra: Partial<Icon> = {}): Icon => ({ src, ...extra });
  it('takes the smallest icon of at least the size asked, then larger ones below it, then unsized ones', () => {
    const icons = [
      icon('none'),
      icon('16', { sizes: ['16x16'] }),
      icon('64', { sizes: ['64x64'] }),
      icon('48', { sizes: ['48x48', '24x24'] }),
      icon('any', { sizes: ['any'] }),
    ];
    assert.deepEqual(
      chooseIcons(icons, 32).light.map((i) => i.src),
      ['48', '64', 'any', '16', 'none'],
    );
  });
  it('keeps each theme its own icons, falling back to the other theme', () => {
    const both = chooseIcons([icon('l', { theme: 'light' }), icon('d', { theme: 'dark' }), icon('n')]);
    assert.deepEqual(
      both.light.map((i) => i.src),
      ['l', 'n'],
    );
    assert.deepEqual(
      both.dark.map((i) => i.src),
      ['d', 'n'],
    );
    const darkOnly = chooseIcons([icon('d', { theme: 'dark' })]);
    assert.deepEqual(
      darkOnly.light.map((i) => i.src),
      ['d'],
    );
  });
  it('skips icons whose declared type we would refuse and anything that is not an icon', () => {
    assert.deepEqual(
      chooseIcons([icon('svg', { mimeType: 'image/svg+xml' }), icon('png', { mimeType: 'image/png' }), null, 'x', { src: 3 }]).light.map(
        (i) => i.src,
      ),
      ['png'],
    );
    assert.deepEqual(chooseIcons(undefined), { light: [], dark: [] });
    assert.deepEqual(chooseIcons({ src: 'x' }), { light: [], dark: [] });
  });
});

describe('icons: fetching over real HTTP on loopback', () => {
  let server: http.Server;
  let base: string;
  const seen: http.IncomingHttpHeaders[] = [];
  const hits = new Map<string, number>();
  let localPort = 0;

  before(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers);
      hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
      switch (req.url) {
        case '/good.png':
          res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(PNG);
          return;
        case '/svg-as-png':
          res.writeHead(200, { 'content-type': 'image/png' }).end(SVG);
          return;
        case '/big':
          res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.concat([PNG, Buffer.alloc(MAX_ICON_BYTES)]));
          return;
        case '/big-chunked':
          // No Content-Length: the cap applies while reading.
          res.writeHead(200, { 'content-type': 'image/png' });
          res.write(PNG);
          res.write(Buffer.alloc(MAX_ICON_BYTES));
          res.end();
          return;
        case '/silent':
          res.writeHead(200, { 'content-type': 'image/png' });
          res.write(PNG.subarray(0, 8));
          return; // never ends
        case '/redirect-file':
          res.writeHead(302, { location: 'file:///icon.png' }).end();
          return;
        case '/redirect-good':
          res.writeHead(301, { location: '/good.png' }).end();
          return;
        case '/redirect-local':
          // 127.0.0.2 is loopback, but not an address the icon's server may send us to.
          res.writeHead(302, { location: `http://127.0.0.2:${localPort}/good.png` }).end();
          return;
        case '/redirect-loop':
          res.writeHead(302, { location: '/redirect-loop' }).end();
          return;
        default:
          res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const get = (path: string, extra: { timeoutMs?: number } = {}) => fetchIcon(new URL(base + path), { allowLoopbackHttp: true, ...extra });

  it('fetches an image, judged by its bytes, with no header but Accept of ours', async () => {
    const got = await get('/good.png');
    assert.equal(got.mimeType, 'image/png');
    assert.deepEqual(got.bytes, PNG);
    const headers = seen.at(-1)!;
    assert.equal(headers.authorization, undefined);
    assert.equal(headers.cookie, undefined);
    assert.match(String(headers.accept), /^image\/png, image\/jpeg, image\/gif, image\/webp$/);
  });
  it('refuses what is not a raster image, whatever its Content-Type', async () => {
    await assert.rejects(get('/svg-as-png'), /not a PNG, JPEG, GIF or WebP/);
  });
  it('refuses more than the cap, announced or not', async () => {
    await assert.rejects(get('/big'), /larger than 262144 bytes/);
    await assert.rejects(get('/big-chunked'), /larger than 262144 bytes/);
  });
  it('gives up on a server that stops answering', async () => {
    await assert.rejects(get('/silent', { timeoutMs: 300 }), /no answer within 300 ms|abort/i);
  });
  it('refuses errors and redirects to another scheme', async () => {
    await assert.rejects(get('/missing'), /HTTP 404/);
    await assert.rejects(get('/redirect-file'));
  });
  it('checks every redirect hop before requesting it: a local address is never reached, a good hop is followed, a loop ends', async () => {
    const local = http.createServer((_req, res) => {
      localHits++;
      res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    });
    let localHits = 0;
    await new Promise<void>((resolve) => local.listen(0, '127.0.0.2', resolve));
    localPort = (local.address() as AddressInfo).port;
    try {
      await assert.rejects(get('/redirect-local'), /redirected to a URL that is not allowed \(the URL names a local or private address\)/);
      assert.equal(localHits, 0, 'the redirect target was requested before it was checked');
      assert.equal((await get('/redirect-good')).mimeType, 'image/png');
      const before = hits.get('/redirect-loop') ?? 0;
      await assert.rejects(get('/redirect-loop'), /more than 5 redirects/);
      assert.equal((hits.get('/redirect-loop') ?? 0) - before, 6);
    } finally {
      local.closeAllConnections();
      await new Promise((resolve) => local.close(resolve));
    }
  });
  it('stores each accepted icon once under its hash, and fetches each URL once per session', async () => {
    const stored: string[] = [];
    const refused: string[] = [];
    const resolver = new IconResolver<string>({
      allowLoopbackHttp: true,
      store: async (name) => {
        stored.push(name);
        return `stored/${name}`;
      },
      onRefused: (_src, why) => refused.push(why),
      maxFetches: 3,
    });
    hits.clear();
    const url = `${base}/good.png`;
    const [a, b] = await Promise.all([resolver.resolve(url), resolver.resolve(url)]);
    assert.match(String(a), /^stored\/[0-9a-f]{64}\.png$/);
    assert.equal(a, b);
    assert.equal(hits.get('/good.png'), 1);
    assert.equal(await resolver.resolve(dataUri('image/png', PNG)), a, 'the same bytes inline are the same file');
    assert.equal(await resolver.resolve(`${base}/svg-as-png`), undefined);
    assert.equal(await resolver.resolve(`${base}/svg-as-png`), undefined);
    assert.equal(hits.get('/svg-as-png'), 1, 'a refusal is remembered');
    assert.equal(await resolver.resolveFirst([{ src: 'file:///icon.png' }, { src: `${base}/missing` }, { src: url }]), a);
    assert.equal(await resolver.resolve(`${base}/good.png?again`), undefined, 'over the fetch budget');
    assert.ok(refused.some((r) => /too many icons/.test(r)));
    assert.ok(refused.some((r) => /file: scheme/.test(r)));
  });
});
