// MCP Apps in the core: the capability we declare, `_meta.ui` visibility, the ui:// resource cache
// and the sandbox policies, against the SDK's own example app server and a fixture of ours.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import {
  APP_MIME_TYPE,
  UI_EXTENSION,
  appFrameCsp,
  allowedOrigins,
  appResourceUri,
  checkCsp,
  type CspRefusal,
  hostPageCsp,
  inlineScriptHashes,
  isToolForApp,
  isToolForPerson,
  localOriginsAllowed,
  uiExtensionCapability,
  uiResourcesOf,
  withFrameCsp,
  type AuditEntry,
  type McpClient,
  type TextContent,
} from '../../src/core';
import { thisMachine } from '../../src/core/policy/gate';
import { GatedServer } from '../../src/core/policy/gated';
import { ROOT, closeAll, connect, eventually } from '../helpers/servers';

const vanilla = {
  command: process.execPath,
  args: ['dist/index.js', '--stdio'],
  cwd: path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-basic-vanillajs'),
};
const fixture = { command: process.execPath, args: [path.join(ROOT, 'test', 'fixtures', 'app-server.mjs')] };
const withApps = { handlers: { extensions: uiExtensionCapability() } };

/** A plain read for the cache, where the gate is not the subject. */
const readOf = (client: McpClient) => (uri: string) => client.readResource(uri);

/** How many resources/read requests the client sent for `uri`. */
function countReads(client: McpClient, uri: string): () => number {
  let n = 0;
  client.onTrace((e) => {
    const m = e.message as { method?: string; params?: { uri?: string } };
    if (e.direction === 'out' && m.method === 'resources/read' && m.params?.uri === uri) n++;
  });
  return () => n;
}

describe('MCP Apps (core)', function () {
  this.timeout(30_000);
  afterEach(closeAll);

  describe('against @modelcontextprotocol/server-basic-vanillajs', () => {
    it('declares the ui extension, finds the app of get-time and reads its HTML once per connection', async () => {
      const { client } = await connect(vanilla, withApps);
      assert.deepEqual(client.clientCapabilities.extensions, { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } });
      const tool = (await client.listTools()).find((t) => t.name === 'get-time');
      assert.ok(tool, 'the example server offers get-time');
      const uri = appResourceUri(tool);
      assert.equal(uri, 'ui://get-time/mcp-app.html');
      assert.ok(isToolForPerson(tool) && isToolForApp(tool), 'no visibility means both');
      const reads = countReads(client, uri!);
      const cache = uiResourcesOf(client, readOf(client));
      const app = await cache.get(uri!);
      assert.match(app.html, /<html/i);
      assert.deepEqual(app.permissions, []);
      assert.equal(await cache.get(uri!), app, 'the second open comes from the cache');
      assert.equal(reads(), 1);
      assert.equal(uiResourcesOf(client, readOf(client)), cache, 'one cache per connection');
      // Every inline script of the real app gets a hash, so the host page's policy lets exactly those run.
      assert.ok(inlineScriptHashes(app.html).length >= 1);
      const result = await client.callTool('get-time', {});
      assert.match((result.result.structuredContent as { time: string }).time, /^\d{4}-\d\d-\d\dT/);
    });
  });

  describe('which CSP sources an app may declare', () => {
    /** [source, refusal from a remote or stdio server, refusal from an HTTP server on loopback]; undefined is taken. */
    const table: Array<[string, CspRefusal | undefined, CspRefusal | undefined]> = [
      // Concrete registrable domains, with and without a port or a wildcard below the domain.
      ['https://example.com', undefined, undefined],
      ['https://api.example.com:8443', undefined, undefined],
      ['wss://live.example.com:*', undefined, undefined],
      ['https://*.example.com', undefined, undefined],
      ['https://*.example.co.uk', undefined, undefined],
      ['https://example.co.uk', undefined, undefined],
      ['https://me.github.io', undefined, undefined],
      ['HTTPS://CDN.Example.COM', undefined, undefined],
      // Wildcards across a whole public suffix.
      ['https://*.com', 'wildcardOverPublicSuffix', 'wildcardOverPublicSuffix'],
      ['wss://*.net', 'wildcardOverPublicSuffix', 'wildcardOverPublicSuffix'],
      ['https://*.co.uk', 'wildcardOverPublicSuffix', 'wildcardOverPublicSuffix'],
      ['https://*.com.au:443', 'wildcardOverPublicSuffix', 'wildcardOverPublicSuffix'],
      ['https://*.github.io', 'wildcardOverPublicSuffix', 'wildcardOverPublicSuffix'],
      ['https://*.amazonaws.com', 'wildcardOverPublicSuffix', 'wildcardOverPublicSuffix'],
      // A suffix alone is nobody's site.
      ['https://com', 'noRegistrableDomain', 'noRegistrableDomain'],
      ['https://co.uk', 'noRegistrableDomain', 'noRegistrableDomain'],
      ['https://intranet', 'noRegistrableDomain', 'noRegistrableDomain'],
      // Loopback, by address and by name, with and without ports.
      ['http://127.0.0.1:*', 'localAddress', undefined],
      ['http://127.8.9.10:3000', 'localAddress', undefined],
      ['http://localhost:8080', 'localAddress', undefined],
      ['ws://localhost', 'localAddress', undefined],
      ['http://app.localhost', 'localAddress', undefined],
      ['http://0.0.0.0:80', 'localAddress', undefined],
      // Private and link-local ranges, and names of the local network.
      ['http://10.1.2.3', 'localAddress', undefined],
      ['http://172.16.0.1:*', 'localAddress', undefined],
      ['http://172.31.255.255', 'localAddress', undefined],
      ['http://192.168.1.1', 'localAddress', undefined],
      ['http://169.254.169.254', 'localAddress', undefined],
      ['http://100.64.0.1', 'localAddress', undefined],
      ['https://printer.local', 'localAddress', undefined],
      ['https://*.home.arpa', 'localAddress', undefined],
      ['https://db.internal', 'localAddress', undefined],
      // Public addresses are concrete hosts; their neighbours outside the private ranges too.
      ['https://93.184.215.14', undefined, undefined],
      ['http://172.32.0.1', undefined, undefined],
      ['https://*.93.184.215.14', 'wildcardOverAddress', 'wildcardOverAddress'],
      // Numbers that browsers read as addresses but are no dotted quad.
      ['http://2130706433', 'notAnOrigin', 'notAnOrigin'],
      ['http://127.1', 'notAnOrigin', 'notAnOrigin'],
      ['http://0x7f.0.0.1', 'notAnOrigin', 'notAnOrigin'],
      ['http://256.1.1.1', 'notAnOrigin', 'notAnOrigin'],
      // IPv6: local ones are refused as local, every one is refused (a CSP source cannot name it).
      ['http://[::1]:*', 'localAddress', 'ipv6'],
      ['http://[fd12:3456::1]', 'localAddress', 'ipv6'],
      ['http://[fe80::1]', 'localAddress', 'ipv6'],
      ['http://[::ffff:127.0.0.1]', 'localAddress', 'ipv6'],
      ['https://[2001:db8::1]', 'ipv6', 'ipv6'],
      // Not origins at all.
      ['*', 'notAnOrigin', 'notAnOrigin'],
      ['https://*', 'notAnOrigin', 'notAnOrigin'],
      ["'self'", 'notAnOrigin', 'notAnOrigin'],
      ['data:', 'notAnOrigin', 'notAnOrigin'],
      ['ftp://example.com', 'notAnOrigin', 'notAnOrigin'],
      ['https://example.com/path', 'notAnOrigin', 'notAnOrigin'],
      ['https://example.com:99999', 'notAnOrigin', 'notAnOrigin'],
      ['https://example.com; script-src *', 'notAnOrigin', 'notAnOrigin'],
    ];
    it('lets only an HTTP server on loopback name local origins, not a stdio one', () => {
      assert.equal(localOriginsAllowed({ type: 'stdio' }), false);
      for (const url of ['http://127.0.0.1:3000/mcp', 'http://localhost:8080/mcp', 'http://[::1]:9000/mcp'])
        assert.equal(localOriginsAllowed({ type: 'http', url }), true, url);
      for (const url of ['https://mcp.example.com/mcp', 'http://192.168.1.5/mcp', 'http://127.0.0.1.example.com/mcp', 'not a url'])
        assert.equal(localOriginsAllowed({ type: 'http', url }), false, url);
    });

    for (const [source, remote, loopback] of table) {
      it(`${source}: ${remote ?? 'taken'} from a remote server, ${loopback ?? 'taken'} from one on loopback`, () => {
        for (const [localAllowed, expected] of [
          [false, remote],
          [true, loopback],
        ] as const) {
          const checked = checkCsp({ connectDomains: [source], frameDomains: [source] }, { localAllowed });
          assert.deepEqual(
            checked.dropped,
            expected
              ? [
                  { source, refusal: expected },
                  { source, refusal: expected },
                ]
              : [],
          );
          assert.deepEqual(allowedOrigins(checked), expected ? [] : [source]);
          const connectSrc = /connect-src ([^;]*)/.exec(appFrameCsp(checked))?.[1];
          assert.equal(connectSrc, expected ? "'none'" : source, 'the policy holds exactly what was taken');
        }
      });
    }
  });

  describe('against the app fixture', () => {
    it('sends capabilities.extensions in initialize only when the host implements apps', async () => {
      const declared = await connect(fixture, withApps);
      const seen = JSON.parse(((await declared.client.callTool('client-capabilities', {})).result.content[0] as TextContent).text);
      assert.deepEqual(seen.extensions, { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } });
      const plain = await connect(fixture);
      const none = JSON.parse(((await plain.client.callTool('client-capabilities', {})).result.content[0] as TextContent).text);
      assert.equal(none.extensions, undefined);
    });

    it('keeps app-only tools from the person and model-only tools from the app', async () => {
      const { client } = await connect(fixture, withApps);
      const tools = new Map((await client.listTools()).map((t) => [t.name, t]));
      assert.equal(isToolForPerson(tools.get('app-helper')!), false);
      assert.equal(isToolForApp(tools.get('app-helper')!), true);
      assert.equal(isToolForPerson(tools.get('model-only')!), true);
      assert.equal(isToolForApp(tools.get('model-only')!), false);
      assert.equal(appResourceUri(tools.get('model-only')!), undefined);
      assert.ok(isToolForPerson(tools.get('echo')!) && isToolForApp(tools.get('echo')!));
      assert.equal(isToolForPerson({ _meta: { ui: { visibility: [] } } }), false, 'an empty list means neither');
      assert.equal(appResourceUri({ _meta: { 'ui/resourceUri': 'ui://old/key.html' } }), 'ui://old/key.html', 'the older flat key');
      assert.equal(appResourceUri({ _meta: { ui: { resourceUri: 'https://example.com/app.html' } } }), undefined, 'only ui:// resources');
    });

    it('reads the app again after resources/updated and after list_changed, not before', async () => {
      const { client } = await connect(fixture, withApps);
      const uri = 'ui://hostile/app.html';
      const reads = countReads(client, uri);
      const cache = uiResourcesOf(client, readOf(client));
      assert.match((await cache.get(uri)).html, /Hostile app v1/);
      await cache.get(uri);
      assert.equal(reads(), 1);
      await client.callTool('bump-ui', { how: 'updated' });
      await eventually(async () => cache.cached.length === 0 || undefined);
      assert.match((await cache.get(uri)).html, /Hostile app v2/);
      assert.equal(reads(), 2);
      await client.callTool('bump-ui', { how: 'list' });
      await eventually(async () => cache.cached.length === 0 || undefined);
      assert.match((await cache.get(uri)).html, /Hostile app v3/);
      assert.equal(reads(), 3);
    });

    it("reads an app's ui:// resource through the app's gate: decided and audited like any read", async () => {
      const { client } = await connect(fixture, withApps);
      const entries: AuditEntry[] = [];
      const gate = new GatedServer({ name: 'apps', rawClient: client }, 'app', {
        context: () => ({
          policy: { tools: {}, autoApprove: [], trustAnnotations: false },
          alwaysAllowed: false,
          fence: 'block',
          roots: [],
          machine: thisMachine(),
        }),
        server: () => ({ name: 'apps', scope: 'user', definition: 'h' }),
        audit: { append: (e) => entries.push(e) },
      });
      const read = async (uri: string) => {
        const run = await gate.readResource(uri);
        if (!run.sent) throw new Error(run.reason);
        return run.result;
      };
      const cache = uiResourcesOf(client, read);
      assert.match((await cache.get('ui://hostile/app.html')).html, /Hostile app/);
      await cache.get('ui://hostile/app.html');
      assert.deepEqual(
        entries.map((e) => [e.origin, e.method, e.name, e.decision, e.outcome.kind]),
        [['app', 'resources/read', 'ui://hostile/app.html', 'allowed', 'ok']],
        'one audited read; the second open comes from the cache',
      );
    });

    it('does not keep a failed read, and refuses what is not a ui:// app', async () => {
      const { client } = await connect(fixture, withApps);
      const cache = uiResourcesOf(client, readOf(client));
      await assert.rejects(cache.get('file:///etc/passwd'), /not a ui:\/\/ resource/);
      await assert.rejects(cache.get('ui://hostile/missing.html'), /no resource/);
      assert.deepEqual(cache.cached, []);
    });

    it('drops CSP entries that are not origins, and builds both policies from the rest', async () => {
      const { client } = await connect(fixture, withApps);
      const app = await uiResourcesOf(client, readOf(client)).get('ui://hostile/app.html');
      assert.deepEqual(app.permissions, ['clipboardWrite']);
      assert.equal(app.prefersBorder, true);
      const csp = checkCsp(app.csp, { localAllowed: false });
      assert.deepEqual(csp.connect, ['https://allowed.example']);
      assert.deepEqual(csp.resource, []);
      assert.deepEqual(
        csp.dropped.map((d) => d.source),
        ["'unsafe-eval'", 'https://*.com', 'http://127.0.0.1:*', 'https://cdn.example; script-src *'],
      );
      assert.deepEqual(allowedOrigins(csp), ['https://allowed.example']);
      const frame = appFrameCsp(csp);
      assert.match(frame, /connect-src https:\/\/allowed\.example;/);
      assert.match(frame, /frame-src 'none'/);
      assert.doesNotMatch(frame, /unsafe-eval|script-src \*/);
      const page = hostPageCsp(csp, 'n0nce', inlineScriptHashes(app.html), 'https://webview.example');
      assert.match(page, /script-src 'nonce-n0nce' 'sha256-[A-Za-z0-9+/=]+';/);
      assert.doesNotMatch(page, /script-src[^;]*unsafe-inline/, 'no inline script runs in the host page without its hash');
      const html = withFrameCsp(app.html, frame);
      assert.ok(html.indexOf('Content-Security-Policy') < html.indexOf('<script'), 'the policy comes before the first script');
    });
  });
});
