import { strict as assert } from 'node:assert';
import {
  ClientRequests,
  ListChanges,
  Notifications,
  ServerRequests,
  listsInvalidatedBy,
  traitsOf,
  type ClientRequestMethod,
  type MethodTraits,
} from '../../src/core/protocol/methods';
import { isCacheableMethod } from '../../src/core/client/cache';
import { missingCapability } from '../../src/core/client/capabilities';
import { listenFilter, refusedParts } from '../../src/core/client/listen';
import type { ServerCapabilities } from '../../src/core/protocol/types';
import type { McpConnection } from '../../src/core/jsonrpc/connection';
import type { ListToolsResult } from '../../src/core/protocol/methods';

// Compiled by `npm run typecheck`, never called: each @ts-expect-error line must stay an error,
// so a method name that is not MCP's, or a result used as the wrong type, keeps failing the build.
export function typeChecks(connection: McpConnection): void {
  // @ts-expect-error a misspelt method is not a client request
  const misspelt: ClientRequestMethod = 'tools/lsit';
  // @ts-expect-error requests are sent by their typed definition, not by a bare string
  void connection.request('tools/list', {});
  // @ts-expect-error tools/list answers with a list, not a string
  const wrongResult: Promise<string> = connection.request(ClientRequests.listTools, {});
  // @ts-expect-error resources/read needs a uri
  void connection.request(ClientRequests.readResource, {});
  const right: Promise<ListToolsResult> = connection.request(ClientRequests.listTools, {});
  void [misspelt, wrongResult, right];
}

describe('typed MCP methods (protocol/methods.ts)', () => {
  it('name every method once per direction, with the spec’s method names', () => {
    for (const table of [ClientRequests, ServerRequests, Notifications]) {
      const methods = Object.values(table).map((t) => t.method);
      assert.equal(new Set(methods).size, methods.length, `duplicates in ${methods.join(', ')}`);
      for (const m of methods) assert.match(m, /^[a-z]+(\/[a-zA-Z_]+)*$/);
    }
    assert.equal(ClientRequests.listResourceTemplates.method, 'resources/templates/list');
    assert.equal(ServerRequests.createMessage.method, 'sampling/createMessage');
    assert.equal(Notifications.elicitationComplete.method, 'notifications/elicitation/complete');
  });
});

describe('method traits on the typed client requests', () => {
  const requests = Object.values(ClientRequests);
  const where = (has: (t: MethodTraits) => unknown) =>
    requests
      .filter((r) => has(r.traits))
      .map((r) => r.method)
      .sort();

  it('declare for every client request the server capability it needs (null for none)', () => {
    const required = Object.fromEntries(requests.map((r) => [r.method, r.traits.requires]));
    assert.deepEqual(required, {
      'server/discover': null,
      initialize: null,
      ping: null,
      'tools/list': 'tools',
      'tools/call': 'tools',
      'resources/list': 'resources',
      'resources/templates/list': 'resources',
      'resources/read': 'resources',
      'resources/subscribe': 'resources.subscribe',
      'resources/unsubscribe': 'resources.subscribe',
      'prompts/list': 'prompts',
      'prompts/get': 'prompts',
      'completion/complete': 'completions',
      'logging/setLevel': 'logging',
      'tasks/get': null,
      'tasks/result': null,
      'tasks/cancel': 'tasks.cancel',
      'tasks/list': 'tasks.list',
      'subscriptions/listen': null,
    });
  });

  it('are what the capability choke point checks: refused without the capability, sent with it', () => {
    for (const { method, traits } of requests) {
      if (!traits.requires) {
        assert.equal(missingCapability(method, {}), undefined, method);
        continue;
      }
      assert.equal(missingCapability(method, {}), traits.requires, method);
      const [top, sub] = traits.requires.split('.');
      const declared = (sub ? { [top]: { [sub]: {} } } : { [top]: {} }) as ServerCapabilities;
      assert.equal(missingCapability(method, declared), undefined, `${method} with ${traits.requires}`);
      if (sub) assert.equal(missingCapability(method, { [top]: { [sub]: false } } as ServerCapabilities), traits.requires);
    }
  });

  it('mark the cacheable, multi-round, initialize-only and named requests of 2026-07-28', () => {
    assert.deepEqual(
      where((t) => t.cacheable),
      ['prompts/list', 'resources/list', 'resources/read', 'resources/templates/list', 'tools/list'],
    );
    assert.deepEqual(
      requests.filter((r) => r.traits.cacheable).map((r) => isCacheableMethod(r.method)),
      [true, true, true, true, true],
    );
    assert.equal(isCacheableMethod('tools/call'), false);
    assert.deepEqual(
      where((t) => t.inputRounds),
      ['prompts/get', 'resources/read', 'tools/call'],
    );
    assert.deepEqual(
      where((t) => t.legacyOnly),
      ['logging/setLevel', 'ping', 'resources/subscribe', 'resources/unsubscribe'],
    );
    assert.deepEqual(Object.fromEntries(requests.filter((r) => r.traits.namedBy).map((r) => [r.method, r.traits.namedBy])), {
      'tools/call': 'name',
      'resources/read': 'uri',
      'prompts/get': 'name',
    });
    assert.equal(traitsOf('sampling/createMessage'), undefined, 'a server request is not a client request');
  });

  it('name the change notification that makes each list stale, and only lists have one', () => {
    const invalidatedBy = Object.fromEntries(
      requests.filter((r) => r.traits.invalidatedBy).map((r) => [r.method, r.traits.invalidatedBy?.notification.method]),
    );
    assert.deepEqual(invalidatedBy, {
      'tools/list': 'notifications/tools/list_changed',
      'prompts/list': 'notifications/prompts/list_changed',
      'resources/list': 'notifications/resources/list_changed',
      'resources/templates/list': 'notifications/resources/list_changed',
    });
    assert.deepEqual(listsInvalidatedBy(ListChanges.tools), ['tools/list']);
    assert.deepEqual(listsInvalidatedBy(ListChanges.prompts), ['prompts/list']);
    assert.deepEqual(listsInvalidatedBy(ListChanges.resources), ['resources/list', 'resources/templates/list']);
    for (const change of Object.values(ListChanges)) {
      assert.ok(Object.values(Notifications).includes(change.notification), change.notification.method);
    }
  });

  it('are where the listen filter comes from: each change asked for exactly when its capability offers it', () => {
    for (const change of Object.values(ListChanges)) {
      const capabilities = { [change.offeredBy]: { listChanged: true } } as ServerCapabilities;
      assert.deepEqual(listenFilter(capabilities, []), { [change.listenKey]: true }, change.offeredBy);
      assert.deepEqual(refusedParts({ [change.listenKey]: true }, {}), [change.listenKey]);
    }
    assert.equal(listenFilter({ tools: {}, prompts: { listChanged: false } }, []), undefined);
  });
});
