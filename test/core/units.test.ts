import { strict as assert } from 'node:assert';
import {
  classifyMessage,
  McpError,
  ErrorCode,
  isTaskLost,
  requiredUrlElicitations,
  SchemaValidator,
  isLoopbackUrl,
  splitCommandLine,
  taskCancelledError,
  taskLostError,
} from '../../src/core';
import { missingCapability } from '../../src/core/client/capabilities';

describe('classifyMessage', () => {
  const cases: Array<[unknown, string]> = [
    [{ jsonrpc: '2.0', id: 1, method: 'ping' }, 'request'],
    [{ jsonrpc: '2.0', id: 'a', method: 'ping', params: {} }, 'request'],
    [{ jsonrpc: '2.0', method: 'notifications/x' }, 'notification'],
    [{ jsonrpc: '2.0', id: 1, result: {} }, 'response'],
    [{ jsonrpc: '2.0', id: 'x', result: null }, 'response'],
    [{ jsonrpc: '2.0', id: 1, error: { code: -1, message: 'no' } }, 'response'],
    [{ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse' } }, 'response'],
    [{ id: 1, method: 'ping' }, 'invalid'],
    [{ jsonrpc: '1.0', id: 1, method: 'ping' }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, method: 5 }, 'invalid'],
    [{ jsonrpc: '2.0', id: {}, method: 'x' }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1 }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'x' } }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, error: { code: 'x', message: 'x' } }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, method: 'x', params: 'str' }, 'invalid'],
    [{ jsonrpc: '2.0', id: null, method: 'x' }, 'invalid'],
    [[{ jsonrpc: '2.0', method: 'x' }], 'invalid'],
    ['text', 'invalid'],
    [null, 'invalid'],
  ];
  for (const [value, kind] of cases) {
    it(`${JSON.stringify(value)} is ${kind}`, () => assert.equal(classifyMessage(value).kind, kind));
  }
  it('keeps the id of an invalid request so it can be answered', () => {
    assert.deepEqual(classifyMessage({ jsonrpc: '2.0', id: 9, method: 1 }), { kind: 'invalid', reason: 'method must be a string', id: 9 });
  });
});

describe('capability choke point', () => {
  it('maps each method to the capability it needs', () => {
    assert.equal(missingCapability('tools/call', {}), 'tools');
    assert.equal(missingCapability('tools/call', { tools: {} }), undefined);
    assert.equal(missingCapability('resources/subscribe', { resources: {} }), 'resources.subscribe');
    assert.equal(missingCapability('resources/subscribe', { resources: { subscribe: true } }), undefined);
    assert.equal(missingCapability('completion/complete', { prompts: {} }), 'completions');
    assert.equal(missingCapability('logging/setLevel', {}), 'logging');
    assert.equal(missingCapability('prompts/get', { prompts: {} }), undefined);
    assert.equal(missingCapability('ping', {}), undefined);
  });
});

describe('McpError', () => {
  it('carries the seed codes', () => {
    assert.equal(McpError.connectionClosed().code, -32000);
    assert.equal(McpError.timeout('x', 1).code, -32001);
    assert.equal(McpError.capabilityDisabled('prompts/list', 'prompts').code, -32002);
    assert.equal(McpError.invalidParams('x').code, ErrorCode.InvalidParams);
    assert.equal(McpError.methodNotFound('x').code, -32601);
  });
  it('wraps foreign errors without losing code or message', () => {
    assert.deepEqual([McpError.from({ code: 5, message: 'm', data: 1 }).code, McpError.from({ code: 5, message: 'm' }).message], [5, 'm']);
    assert.equal(McpError.from(new TypeError('boom')).code, ErrorCode.InternalError);
    assert.equal(McpError.from('text').message, 'text');
  });
  it('marks local failures with a kind that survives an error response the transport makes up', () => {
    const refused = McpError.httpStatus('HTTP 404 Not Found from POST http://127.0.0.1/mcp', 404, {
      url: 'http://127.0.0.1/mcp',
      method: 'POST',
      status: 404,
    });
    assert.deepEqual(refused.kind, { type: 'httpStatus', status: 404 });
    const wire = refused.toResponseError();
    assert.deepEqual(JSON.parse(JSON.stringify(wire)), {
      code: ErrorCode.InternalError,
      message: refused.message,
      data: { url: 'http://127.0.0.1/mcp', method: 'POST', status: 404 },
    });
    assert.equal(McpError.from(wire), refused);
    assert.deepEqual(McpError.oversize('too big', 10).kind, { type: 'oversize', limit: 10 });
    assert.equal(McpError.capabilityDisabled('prompts/list', 'prompts').kind?.type, 'capabilityDisabled');
  });
  it('marks a lost or cancelled task by kind, and a look-alike from a server not at all', () => {
    const task = {
      taskId: 't1',
      status: 'cancelled' as const,
      createdAt: '2025-01-01T00:00:00Z',
      lastUpdatedAt: '2025-01-01T00:00:00Z',
      ttl: null,
    };
    assert.deepEqual(taskCancelledError(task).kind, { type: 'taskCancelled', task });
    assert.equal(isTaskLost(taskLostError(task, 'the server restarted')), true);
    assert.equal(isTaskLost(McpError.from({ code: ErrorCode.ConnectionClosed, message: 'x', data: { taskLost: true, task } })), false);
    assert.equal(McpError.from({ code: -32800, message: 'x', data: { task } }).kind, undefined);
  });
  it("never takes a server's error data for one of our kinds", () => {
    // The same shapes from a peer: a status in data is not our HTTP refusal, a capability is not our -32002.
    assert.equal(McpError.from({ code: ErrorCode.InternalError, message: 'x', data: { status: 404 } }).kind, undefined);
    assert.equal(McpError.from({ code: ErrorCode.ParseError, message: 'x', data: { limit: 1 } }).kind, undefined);
    const remote = McpError.from({ code: -32002, message: 'gone', data: { capability: 'resources' } });
    assert.equal(remote.isResourceNotFound, true);
    assert.equal(remote.toString(), 'Resource not found (-32002): gone');
  });
  it('reads the URL elicitations of a -32042 error, and nothing from others', () => {
    const page = { mode: 'url', url: 'https://example.test/auth', message: 'Sign in', elicitationId: 'e1' };
    const err = new McpError(-32042, 'needs a browser', { elicitations: [page, { mode: 'form' }, { mode: 'url' }] });
    assert.deepEqual(requiredUrlElicitations(err), [page]);
    assert.deepEqual(requiredUrlElicitations(new McpError(-32603, 'x', { elicitations: [page] })), []);
    assert.deepEqual(requiredUrlElicitations(new McpError(-32042, 'no data')), []);
  });
});

describe('isLoopbackUrl: the one loopback check (OAuth over plain http, local origins of apps, test icons)', () => {
  const table: [string, boolean][] = [
    ['http://localhost:3000/mcp', true],
    ['http://LOCALHOST/cb', true],
    ['http://127.0.0.1:8080/', true],
    ['http://127.10.20.30/', true],
    ['http://[::1]:9000/mcp', true],
    ['https://localhost/', true],
    ['http://127.0.0.1.example.com/', false],
    ['http://sub.localhost/', false],
    ['http://192.168.1.5/', false],
    ['http://[::ffff:127.0.0.1]/', false],
    ['http://0.0.0.0/', false],
    ['https://mcp.example.com/', false],
    ['not a url', false],
  ];
  for (const [url, loopback] of table)
    it(`${url}: ${loopback ? 'loopback' : 'not loopback'}`, () => assert.equal(isLoopbackUrl(url), loopback));
  it('takes a URL as well as a string', () => assert.equal(isLoopbackUrl(new URL('http://[::1]/')), true));
});

describe('SchemaValidator', () => {
  const v = new SchemaValidator();
  it('validates draft-07 schemas', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { n: { type: 'integer', minimum: 1 } },
      required: ['n'],
      definitions: { x: { type: 'string' } },
    };
    assert.deepEqual(v.check(schema, { n: 2 }), { ok: true });
    const bad = v.check(schema, { n: 0 });
    assert.ok(!bad.ok && /\/n must be >= 1/.test(bad.message));
  });
  it('validates 2020-12 schemas (the default without $schema)', () => {
    const schema = {
      type: 'object',
      properties: { tags: { type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'number' } } },
      $defs: { a: {} },
    };
    assert.deepEqual(v.check(schema, { tags: ['a', 1, 2] }), { ok: true });
    assert.ok(!v.check(schema, { tags: ['a', 'b'] }).ok);
    const explicit = { ...schema, $schema: 'https://json-schema.org/draft/2020-12/schema' };
    assert.ok(!v.check(explicit, { tags: [1] }).ok);
  });
  it('checks formats and enums', () => {
    const schema = { type: 'object', properties: { e: { type: 'string', format: 'email' }, c: { enum: ['red', 'blue'] } } };
    assert.ok(v.check(schema, { e: 'a@b.co', c: 'red' }).ok);
    const bad = v.check(schema, { e: 'nope', c: 'green' });
    assert.ok(!bad.ok && /format "email"/.test(bad.message) && /red, blue/.test(bad.message));
  });
  it('reports a schema it cannot compile instead of throwing', () => {
    const r = v.check({ type: 'object', properties: { a: { type: 'no-such-type' } } }, {});
    assert.ok(!r.ok && /the schema cannot be used/.test(r.message));
  });
  it('compiles each schema object once', () => {
    const schema = { type: 'object' };
    assert.equal(v.compile(schema), v.compile(schema));
  });
});

describe('splitCommandLine', () => {
  it('splits words and honours quotes and escapes', () => {
    assert.deepEqual(splitCommandLine(`node  "my server.js" --name 'a b' x\\ y "q\\"t" ''`), [
      'node',
      'my server.js',
      '--name',
      'a b',
      'x y',
      'q"t',
      '',
    ]);
  });
  it('refuses an unterminated quote', () => {
    assert.throws(() => splitCommandLine('node "oops'), /Unterminated/);
  });
});
