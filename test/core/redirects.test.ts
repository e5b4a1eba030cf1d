import { strict as assert } from 'node:assert';
import { StreamableHttpTransport, type HttpServerParams } from '../../src/core';
import { MAX_REDIRECTS, nodeFetch } from '../../src/core/transport/nodeFetch';
import { useFixtures, type Fixture } from '../helpers/httpServers';
import { connectTransport } from '../helpers/servers';

describe('HTTP redirects (node:http fetch)', function () {
  this.timeout(20_000);
  const start = useFixtures();
  const open = (url: string, params: Partial<HttpServerParams> = {}) => connectTransport(new StreamableHttpTransport({ url, ...params }));
  const origin = (f: Fixture) => new URL(f.url).origin;

  for (const status of [307, 308, 301, 302]) {
    it(`follows a ${status} on the initialize POST with the same method, body and headers`, async () => {
      const f = await start('redirect');
      const t = await open(`${origin(f)}/moved?status=${status}`, { headers: { Authorization: 'Bearer same-origin' } });
      assert.deepEqual(
        (await t.client.listTools()).map((x) => x.name),
        ['work'],
      );
      const seen = await f.requests();
      const [first, second] = seen;
      assert.equal(`${first.method} ${first.path}`, `POST /moved?status=${status}`);
      assert.equal(`${second.method} ${second.path}`, 'POST /mcp');
      assert.deepEqual(second.body, first.body);
      assert.equal(second.body?.method, 'initialize');
      assert.equal(second.headers.authorization, 'Bearer same-origin', 'credentials stay on the same origin');
    });
  }

  it('turns a POST into a GET without body on 303', async () => {
    const f = await start('redirect');
    const response = await nodeFetch(`${origin(f)}/moved?status=303`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","method":"x"}',
    });
    await response.body?.cancel();
    const [, second] = await f.requests();
    assert.equal(`${second.method} ${second.path}`, 'GET /mcp');
    assert.equal(second.body, undefined);
    assert.equal(second.headers['content-type'], undefined);
    assert.equal(response.url, `${origin(f)}/mcp`);
    assert.equal(response.redirected, true);
  });

  it('sends neither Authorization, cookies nor configured headers to another origin', async () => {
    const redirector = await start('redirect');
    const target = await start('json');
    const secrets = { Authorization: 'Bearer s3cret', Cookie: 'sid=s3cret', 'X-Api-Key': 's3cret' };
    const t = await open(`${origin(redirector)}/away?to=${encodeURIComponent(target.url)}`, { headers: secrets });
    assert.deepEqual(
      (await t.client.listTools()).map((x) => x.name),
      ['work'],
    );
    const [first] = await redirector.requests();
    assert.equal(first.headers['x-api-key'], 's3cret', 'the origin the person named gets them');
    const reached = (await target.requests()).filter((r) => r.path === '/mcp');
    assert.ok(reached.length >= 2);
    for (const r of reached) {
      assert.equal(r.headers.authorization, undefined, `${r.method} ${r.body?.method ?? ''}`);
      assert.equal(r.headers.cookie, undefined);
      assert.equal(r.headers['x-api-key'], undefined);
      assert.ok(JSON.stringify(r.headers).indexOf('s3cret') === -1);
    }
    assert.equal(reached[0].headers['content-type'], 'application/json', 'the protocol headers go along');
  });

  it(`gives up after ${MAX_REDIRECTS} redirects`, async () => {
    const f = await start('redirect');
    await assert.rejects(nodeFetch(`${origin(f)}/loop`, { method: 'POST', body: '{}' }), /more than 20 redirects/);
    assert.equal((await f.requests()).length, MAX_REDIRECTS + 1);
  });

  it('returns the redirect itself when asked for manual redirects', async () => {
    const f = await start('redirect');
    const response = await nodeFetch(`${origin(f)}/moved`, { redirect: 'manual' });
    await response.body?.cancel();
    assert.equal(response.status, 307);
    assert.equal(response.headers.get('location'), '/mcp');
    assert.equal((await f.requests()).length, 1);
  });
});
