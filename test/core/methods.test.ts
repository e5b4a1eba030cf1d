import { strict as assert } from 'node:assert';
import { ClientRequests, Notifications, ServerRequests, type ClientRequestMethod } from '../../src/core/protocol/methods';
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
