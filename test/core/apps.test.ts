// MCP Apps in the core: the capability we declare, `_meta.ui` visibility, the ui:// resource cache
// and the sandbox policies, against the SDK's own example app server and a fixture of ours.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import {
  APP_MIME_TYPE,
  UI_EXTENSION,
  appFrameCsp,
  appResourceUri,
  checkCsp,
  hostPageCsp,
  inlineScriptHashes,
  isToolForApp,
  isToolForPerson,
  uiExtensionCapability,
  uiResourcesOf,
  withFrameCsp,
  type McpClient,
  type TextContent,
} from '../../src/core';
import { ROOT, closeAll, connect, eventually } from '../helpers/servers';

const vanilla = { command: process.execPath, args: ['dist/index.js', '--stdio'], cwd: path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-basic-vanillajs') };
const fixture = { command: process.execPath, args: [path.join(ROOT, 'test', 'fixtures', 'app-server.mjs')] };
const withApps = { handlers: { extensions: uiExtensionCapability() } };

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
      const cache = uiResourcesOf(client);
      const app = await cache.get(uri!);
      assert.match(app.html, /<html/i);
      assert.deepEqual(app.permissions, []);
      assert.equal(await cache.get(uri!), app, 'the second open comes from the cache');
      assert.equal(reads(), 1);
      assert.equal(uiResourcesOf(client), cache, 'one cache per connection');
      // Every inline script of the real app gets a hash, so the host page's policy lets exactly those run.
      assert.ok(inlineScriptHashes(app.html).length >= 1);
      const result = await client.callTool('get-time', {});
      assert.match((result.result.structuredContent as { time: string }).time, /^\d{4}-\d\d-\d\dT/);
    });
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
      const cache = uiResourcesOf(client);
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

    it('does not keep a failed read, and refuses what is not a ui:// app', async () => {
      const { client } = await connect(fixture, withApps);
      const cache = uiResourcesOf(client);
      await assert.rejects(cache.get('file:///etc/passwd'), /not a ui:\/\/ resource/);
      await assert.rejects(cache.get('ui://hostile/missing.html'), /no resource/);
      assert.deepEqual(cache.cached, []);
    });

    it('drops CSP entries that are not origins, and builds both policies from the rest', async () => {
      const { client } = await connect(fixture, withApps);
      const app = await uiResourcesOf(client).get('ui://hostile/app.html');
      assert.deepEqual(app.permissions, ['clipboardWrite']);
      assert.equal(app.prefersBorder, true);
      const csp = checkCsp(app.csp);
      assert.deepEqual(csp.connect, ['https://allowed.example']);
      assert.deepEqual(csp.resource, []);
      assert.deepEqual(csp.dropped.sort(), ["'unsafe-eval'", 'https://cdn.example; script-src *'].sort());
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
