import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ErrorCode,
  HttpTransport,
  MAX_STREAM_RECONNECTS,
  McpError,
  StreamableHttpTransport,
  type AuthChallenge,
  type HttpAuthProvider,
  type HttpServerParams,
  type McpClientOptions,
  type TextContent,
} from '../../src/core';
import { freePort, startEverything, useFixtures, type SeenRequest } from '../helpers/httpServers';
import { closeAll, connectTransport, eventually } from '../helpers/servers';

const text = (block: unknown) => (block as TextContent).text;
const mcpRequests = (seen: SeenRequest[]) => seen.filter((r) => r.path === '/mcp');
const rpc = (method: string) => (r: SeenRequest) => r.body?.method === method;

/** Resolves with the error a promise rejects with, and when. */
async function failure(promise: Promise<unknown>): Promise<{ error: McpError; ms: number }> {
  const started = Date.now();
  try {
    await promise;
  } catch (error) {
    return { error: error as McpError, ms: Date.now() - started };
  }
  return assert.fail('expected a rejection');
}

describe('Streamable HTTP and HTTP+SSE against a fixture server', function () {
  this.timeout(20_000);
  const start = useFixtures();
  const open = (url: string, params: Partial<HttpServerParams> = {}, options: McpClientOptions = {}) =>
    connectTransport(new StreamableHttpTransport({ url, ...params }), options);

  it('sends Accept, Content-Type, configured headers, Mcp-Session-Id and MCP-Protocol-Version, and DELETEs the session on close', async () => {
    const f = await start('json');
    const t = await open(f.url, { headers: { 'X-Team': 'blue' } });
    assert.equal(t.transport.sessionId, 'session-1');
    assert.deepEqual(
      (await t.client.listTools()).map((x) => x.name),
      ['work'],
    );
    await t.waitForLog((l) => /offers no GET stream/.test(l.message));
    await t.client.close();

    const [init, ...later] = mcpRequests(await f.requests());
    assert.equal(init.body?.method, 'initialize');
    assert.equal(init.headers.accept, 'application/json, text/event-stream');
    assert.equal(init.headers['content-type'], 'application/json');
    assert.equal(init.headers['mcp-session-id'], undefined, 'initialize has no session yet');
    assert.equal(init.headers['x-team'], 'blue');
    assert.deepEqual(later.map((r) => `${r.method} ${r.body?.method ?? ''}`.trim()).sort(), [
      'DELETE',
      'GET',
      'POST notifications/initialized',
      'POST tools/list',
    ]);
    for (const r of later) {
      assert.equal(r.headers['mcp-session-id'], 'session-1', `${r.method} carries the session`);
      assert.equal(r.headers['mcp-protocol-version'], '2025-11-25', `${r.method} carries the version`);
      assert.equal(r.headers['x-team'], 'blue', `${r.method} carries the configured header`);
    }
    assert.equal(later.find(rpc('tools/list'))?.headers.accept, 'application/json, text/event-stream');
  });

  it('reads SSE replies, and server messages from the GET stream in arrival order', async () => {
    const f = await start('sse');
    const t = await open(f.url);
    const messages: unknown[] = [];
    t.client.onLogMessage((m) => messages.push(m.data));
    await eventually(async () => ((await f.requests()).some((r) => r.method === 'GET') ? true : undefined));
    const { result } = await t.client.callTool('notify', {});
    assert.equal(text(result.content[0]), 'done notify');
    await eventually(async () => (messages.length >= 3 ? true : undefined));
    assert.deepEqual(messages, ['message 1', 'message 2', 'message 3']);
  });

  it('resumes a GET stream cut mid-event with Last-Event-ID, losing and repeating nothing', async () => {
    const f = await start('sse');
    const t = await open(f.url);
    const messages: unknown[] = [];
    t.client.onLogMessage((m) => messages.push(m.data));
    await eventually(async () => ((await f.requests()).some((r) => r.method === 'GET') ? true : undefined));
    await t.client.callTool('notify', { cut: true });
    await eventually(async () => (messages.length >= 3 ? true : undefined));
    // The stream is ordered: a duplicate of the resume would come before a later round of messages.
    await t.client.callTool('notify', {});
    await eventually(async () => (messages.length >= 6 ? true : undefined));
    assert.deepEqual(messages, ['message 1', 'message 2', 'message 3', 'message 1', 'message 2', 'message 3']);
    const resumed = (await f.requests()).filter((r) => r.method === 'GET' && r.headers['last-event-id']);
    assert.equal(resumed.length, 1);
    assert.match(resumed[0].headers['last-event-id'], /^s\d+\/1$/, 'resumed after message 1, the last whole event');
  });

  it('resumes a reply stream dropped mid-event (twice), honouring retry:, with every message once', async () => {
    const f = await start('sse');
    const t = await open(f.url);
    const progress: number[] = [];
    const { result } = await t.client.callTool('drop', { cuts: [2, 3], retry: 300 }, { onProgress: (p) => progress.push(p.progress) });
    assert.equal(text(result.content[0]), 'done drop');
    assert.deepEqual(progress, [1, 2]);
    const seen = await f.requests();
    const resumes = seen.filter((r) => r.method === 'GET' && r.headers['last-event-id']);
    assert.deepEqual(
      resumes.map((r) => r.headers['last-event-id'].split('/')[1]),
      ['1', '2'],
    );
    const drops = seen.filter((r) => r.method === 'DROP');
    assert.equal(drops.length, 2);
    for (const [i, resume] of resumes.entries()) {
      const drop = drops[i];
      assert.ok(resume.at - drop.at >= 250, `waited ${resume.at - drop.at} ms of the server's 300 ms retry`);
      assert.equal(resume.headers['mcp-session-id'], 'session-1');
    }
    assert.deepEqual(await t.client.ping(), {});
  });

  it('drops the events a careless server repeats on resuming', async () => {
    const f = await start('sse');
    const t = await open(f.url);
    const progress: number[] = [];
    const { result } = await t.client.callTool('drop', { replayAll: true }, { onProgress: (p) => progress.push(p.progress) });
    assert.equal(text(result.content[0]), 'done drop');
    assert.deepEqual(progress, [1, 2]);
    assert.equal((await f.requests()).filter((r) => r.method === 'GET' && r.headers['last-event-id']).length, 1);
  });

  it('gives up resuming after a bounded number of tries, with a clear error, and lives on', async () => {
    const f = await start('sse');
    const t = await open(f.url);
    const { error } = await failure(t.client.callTool('drop-unresumable', {}));
    assert.equal(error.code, ErrorCode.ConnectionClosed);
    assert.match(
      error.message,
      new RegExp(`gave up on the reply stream of request .* after ${MAX_STREAM_RECONNECTS} reconnections: HTTP 503`),
    );
    assert.match(error.message, /try again later/);
    const resumes = (await f.requests()).filter((r) => r.method === 'GET' && r.headers['last-event-id']);
    assert.equal(resumes.length, MAX_STREAM_RECONNECTS);
    assert.deepEqual(await t.client.ping(), {});
  });

  it('fails a request at once when its reply stream ends unanswered with no id to resume from', async () => {
    const f = await start('sse');
    const t = await open(f.url);
    const { error, ms } = await failure(t.client.callTool('no-ids', {}));
    assert.equal(error.code, ErrorCode.ConnectionClosed);
    assert.match(error.message, /ended before the answer .* no event id to resume from/);
    assert.ok(ms < 5000, `rejected after ${ms} ms, long before the 20 s timeout`);
  });

  it('fails a request the server answers with 202 Accepted at once, saying so, and lives on', async () => {
    const f = await start('json');
    const t = await open(f.url);
    // Without the rule the call would wait for its 60 s default timeout, past the test's 20 s.
    const { error } = await failure(t.client.callTool('accept-only', {}));
    assert.equal(error.code, ErrorCode.InternalError);
    assert.match(error.message, /answered request \S+ with HTTP 202 and no body .* a request must get a JSON or SSE answer/);
    assert.deepEqual(error.data, { url: f.url, status: 202 });
    assert.deepEqual(await t.client.ping(), {});
  });

  it('re-initializes exactly once when the session is gone (404), invisibly, and resends', async () => {
    const f = await start('json');
    const t = await open(f.url);
    await t.client.callTool('forget', {});
    assert.deepEqual(await t.client.ping(), {});
    assert.deepEqual(await t.client.ping(), {});
    assert.equal(t.transport.sessionId, 'session-2');
    assert.equal(t.client.serverInfo?.name, 'http-fixture-json');

    const seen = mcpRequests(await f.requests());
    const inits = seen.filter(rpc('initialize'));
    assert.equal(inits.length, 2, 'one re-initialize');
    assert.notEqual(inits[1].body?.id, inits[0].body?.id, 'with a fresh id');
    assert.deepEqual(inits[1].body?.params, inits[0].body?.params, 'and the same parameters');
    assert.deepEqual(
      seen.filter(rpc('notifications/initialized')).map((r) => r.headers['mcp-session-id']),
      ['session-1', 'session-2'],
    );
    assert.deepEqual(
      seen.filter(rpc('ping')).map((r) => r.headers['mcp-session-id']),
      ['session-1', 'session-2', 'session-2'],
    );
    assert.ok(t.logs.some((l) => /no longer knows our session/.test(l.message)));
  });

  it('fails with -32000 when the session is gone again after re-initializing, and re-initializes only once', async () => {
    const f = await start('json');
    const t = await open(f.url);
    const { error } = await failure(t.client.callTool('always-404', {}));
    assert.equal(error.code, ErrorCode.ConnectionClosed);
    assert.match(error.message, /does not know the session even after re-initializing/);
    assert.equal((await f.requests()).filter(rpc('initialize')).length, 2);
  });

  it('closes the connection with -32000 when initializing a new session fails', async () => {
    const f = await start('json');
    const t = await open(f.url);
    await t.client.callTool('retire', {});
    const { error } = await failure(t.client.ping());
    assert.equal(error.code, ErrorCode.ConnectionClosed);
    assert.match(
      error.message,
      new RegExp(`initializing a new one failed: HTTP 503 Service Unavailable from POST ${f.url}: down for maintenance`),
    );
    assert.equal(t.client.isClosed, true);
    assert.equal((await f.requests()).filter(rpc('initialize')).length, 2);
  });

  it('turns a 500 into a clear error naming the URL and status, promptly, and lives on', async () => {
    const f = await start('json');
    const t = await open(f.url);
    const { error, ms } = await failure(t.client.callTool('status-500', {}));
    assert.equal(error.code, ErrorCode.InternalError);
    assert.equal(error.message, `HTTP 500 Internal Server Error from POST ${f.url}: boom: the database is down`);
    assert.deepEqual(error.data, { url: f.url, method: 'POST', status: 500 });
    assert.ok(ms < 5000, `rejected after ${ms} ms`);
    assert.deepEqual(await t.client.ping(), {});
  });

  it('fails connect clearly when nothing listens on the port', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const { error, ms } = await failure(open(url));
    assert.equal(error.code, ErrorCode.ConnectionClosed);
    assert.match(error.message, new RegExp(`Could not reach ${url} \\(POST\\): .*ECONNREFUSED`));
    assert.ok(ms < 5000, `failed after ${ms} ms`);
    const secret = await failure(open(`${url}?token=s3cret`));
    assert.match(
      secret.error.message,
      new RegExp(`Could not reach ${url}\\?token=\\*\\*\\* \\(POST\\)`),
      'credential-looking query values are masked',
    );
    const userInfo = await failure(open(`http://user:pa55@127.0.0.1:${port}/mcp`));
    assert.equal(userInfo.error.code, ErrorCode.InvalidParams);
    assert.doesNotMatch(userInfo.error.message, /pa55/);
  });

  it('names the host when its name does not resolve (through the injectable fetch)', async () => {
    // No DNS in tests: a fetch that fails the way Node's does for an unknown host.
    const unresolvable: typeof fetch = async () => {
      throw Object.assign(new TypeError('fetch failed'), {
        cause: Object.assign(new Error('getaddrinfo ENOTFOUND mcp.invalid'), { code: 'ENOTFOUND' }),
      });
    };
    const { error } = await failure(open('https://mcp.invalid/mcp', { fetch: unresolvable }));
    assert.equal(error.code, ErrorCode.ConnectionClosed);
    assert.equal(error.message, 'Could not reach https://mcp.invalid/mcp (POST): getaddrinfo ENOTFOUND mcp.invalid');
    assert.deepEqual(error.data, { url: 'https://mcp.invalid/mcp', method: 'POST', cause: 'ENOTFOUND' });
  });

  it('reports a non-JSON body as -32700, fails that request at once and lives on', async () => {
    const f = await start('json');
    const t = await open(f.url);
    const { error, ms } = await failure(t.client.callTool('not-json', {}));
    assert.equal(error.code, ErrorCode.ParseError);
    assert.match(error.message, new RegExp(`Not JSON from POST ${f.url} .*this is not json`));
    assert.ok(ms < 5000, `rejected after ${ms} ms`);
    assert.ok(
      t.logs.some((l) => l.source === 'protocol' && l.message.startsWith('-32700') && l.message.includes('this is not json')),
      'reported through the reader',
    );
    assert.deepEqual(await t.client.ping(), {});
  });

  it('refuses a reply in a JSON-RPC batch as stdio does (the classifier refuses batches), fails that request at once and lives on', async () => {
    const f = await start('json');
    const t = await open(f.url);
    const { error } = await failure(t.client.callTool('batch', {}));
    assert.match(error.message, /does not answer request/);
    assert.ok(
      t.logs.some((l) => l.source === 'protocol' && l.message.startsWith('-32600') && l.message.includes('batches are not supported')),
      'the batch is logged as refused',
    );
    assert.deepEqual(await t.client.ping(), {});
  });

  it('refuses a body over the size limit and a reply that is neither JSON nor SSE', async () => {
    const f = await start('json');
    const t = await open(f.url, { maxMessageBytes: 1000 });
    const big = await failure(t.client.callTool('big', {}));
    assert.equal(big.error.code, ErrorCode.ParseError);
    assert.match(big.error.message, new RegExp(`The reply to POST ${f.url} exceeds the limit of 1000 bytes`));
    const html = await failure(t.client.callTool('wrong-type', {}));
    assert.match(html.error.message, /Unexpected content type 'text\/html'/);
    assert.deepEqual(await t.client.ping(), {});
  });

  it('times out a slow server, and close() ends what is still in flight', async () => {
    const f = await start('json');
    const t = await open(f.url);
    const slow = await failure(t.client.callTool('slow', {}, { timeoutMs: 300 }));
    assert.equal(slow.error.code, ErrorCode.RequestTimeout);
    assert.deepEqual(await t.client.ping(), {});
    const pending = failure(t.client.callTool('slow', {}));
    await eventually(async () => ((await f.requests()).filter((r) => r.body?.params?.name === 'slow').length === 2 ? true : undefined));
    await t.client.close();
    const closed = await pending;
    assert.equal(closed.error.code, ErrorCode.ConnectionClosed);
  });

  it('times out an initialize the server never answers', async () => {
    const silent = http.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`;
      const { error } = await failure(open(url, {}, { initializeTimeoutMs: 300 }));
      assert.equal(error.code, ErrorCode.RequestTimeout);
      assert.match(error.message, /timed out after 300 ms: initialize/);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  describe('authorization', () => {
    /** Hands out tokens in turn; each challenge moves on to the next. */
    class TokenSequence implements HttpAuthProvider {
      readonly challenges: AuthChallenge[] = [];
      constructor(private readonly tokens: string[]) {}
      async authorizationHeader(): Promise<string | undefined> {
        return `Bearer ${this.tokens[0]}`;
      }
      async onChallenge(challenge: AuthChallenge): Promise<boolean> {
        this.challenges.push(challenge);
        if (this.tokens.length > 1) this.tokens.shift();
        return true;
      }
    }

    it('asks the provider on 401 and on 403 insufficient_scope, resends, and never logs a token', async () => {
      const f = await start('auth');
      const provider = new TokenSequence(['bad', 'good', 'better']);
      const t = await open(f.url, { authProvider: provider });
      const { result } = await t.client.callTool('work', {});
      assert.equal(text(result.content[0]), 'done work');
      assert.deepEqual(
        provider.challenges.map((c) => c.status),
        [401, 403],
      );
      assert.equal(provider.challenges[0].serverUrl.href, f.url);
      assert.match(provider.challenges[0].wwwAuthenticate ?? '', /resource_metadata=/);
      assert.match(provider.challenges[1].wwwAuthenticate ?? '', /error="insufficient_scope"/);
      await t.client.close();
      assert.deepEqual(
        mcpRequests(await f.requests())
          .filter(rpc('tools/call'))
          .map((r) => r.headers.authorization),
        ['Bearer good', 'Bearer better'],
      );
      assert.ok(!t.logs.some((l) => /Bearer|good|better/.test(l.message)), 'no token in the log');
    });

    it('gives up after three tries per message', async () => {
      const f = await start('auth');
      const provider = new TokenSequence(['bad']);
      const { error } = await failure(open(f.url, { authProvider: provider }));
      assert.match(error.message, new RegExp(`HTTP 401 from POST ${f.url}: still refused after 3 tries`));
      assert.equal(provider.challenges.length, 2);
      assert.equal((await f.requests()).filter(rpc('initialize')).length, 3);
    });

    it('fails clearly on 401 without a provider', async () => {
      const f = await start('auth');
      const { error } = await failure(open(f.url));
      assert.equal(error.message, `HTTP 401 from POST ${f.url}: the server requires authorization and none is configured`);
    });
  });

  describe('HttpTransport', () => {
    for (const scenario of ['legacy', 'legacy-404']) {
      it(`falls back to HTTP+SSE when the initialize POST gets ${scenario === 'legacy' ? 405 : 404}`, async () => {
        const f = await start(scenario);
        const t = await connectTransport(new HttpTransport({ url: f.url }));
        assert.equal(t.transport.kind, 'sse');
        const { result } = await t.client.callTool('work', {});
        assert.equal(text(result.content[0]), 'done work');
        const seen = (await f.requests()).map((r) => `${r.method} ${r.path} ${r.body?.method ?? ''}`.trim());
        assert.deepEqual(seen.slice(0, 4), [
          'POST /mcp initialize',
          'GET /mcp',
          'POST /messages?session=L1 initialize',
          'POST /messages?session=L1 notifications/initialized',
        ]);
      });
    }

    it("does not fall back when the server's own JSON-RPC error to initialize carries a status in its data", async () => {
      const f = await start('refuse-with-status');
      const transport = new HttpTransport({ url: f.url });
      await assert.rejects(connectTransport(transport), (e: McpError) => e.code === ErrorCode.InternalError && e.message === 'not today');
      assert.equal(transport.kind, 'streamableHttp');
      assert.deepEqual(
        (await f.requests()).map((r) => `${r.method} ${r.path}`),
        ['POST /mcp'],
      );
    });

    it('rejects pending requests with -32000 when the legacy stream drops', async () => {
      const f = await start('legacy');
      const t = await connectTransport(new HttpTransport({ url: f.url }));
      const { error, ms } = await failure(t.client.callTool('hang-up', {}));
      assert.equal(error.code, ErrorCode.ConnectionClosed);
      assert.match(error.message, new RegExp(`the SSE stream broke: .*\\(${f.url}\\)`));
      assert.ok(ms < 5000, `rejected after ${ms} ms`);
      assert.equal(t.client.isClosed, true);
    });

    it('refuses a legacy endpoint on another origin', async () => {
      const f = await start('legacy-foreign');
      const { error } = await failure(connectTransport(new HttpTransport({ url: f.url })));
      assert.match(
        error.message,
        /neither Streamable HTTP \(POST got HTTP 405\) nor HTTP\+SSE: Refused the endpoint http:\/\/localhost:9\/messages/,
      );
      assert.ok(!(await f.requests()).some((r) => r.path.startsWith('/messages')));
    });

    it('stays on Streamable HTTP when the server speaks it', async () => {
      const f = await start('json');
      const t = await connectTransport(new HttpTransport({ url: f.url }));
      assert.equal(t.transport.kind, 'streamableHttp');
      assert.deepEqual(await t.client.ping(), {});
    });
  });
});

describe('HttpTransport against server-everything', function () {
  this.timeout(30_000);
  afterEach(closeAll);

  for (const mode of ['streamableHttp', 'sse'] as const) {
    it(`connects to its ${mode} mode and calls echo`, async () => {
      const server = await startEverything(mode);
      try {
        const t = await connectTransport(new HttpTransport({ url: server.url }));
        assert.equal(t.transport.kind, mode);
        assert.equal(t.client.serverInfo?.name, 'mcp-servers/everything');
        const { result } = await t.client.callTool('echo', { message: 'über HTTP' });
        assert.equal(text(result.content[0]), 'Echo: über HTTP');
        await t.client.close();
      } finally {
        await server.stop();
      }
    });
  }
});
