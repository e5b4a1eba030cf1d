import { strict as assert } from 'node:assert';
import { McpError } from '../../src/core';
import { closeAll, connect, everythingServer, v2StdioServer } from '../helpers/servers';

/** "Not found" from resources/read reads as such in both eras: -32002 (2025-11-25) or -32602 (2026-07-28, and v2-SDK servers always). */
describe('a resource that does not exist', function () {
  this.timeout(30_000);
  afterEach(closeAll);

  async function failure(read: () => Promise<unknown>): Promise<McpError> {
    return read().then(
      () => assert.fail('the read succeeded'),
      (e: unknown) => McpError.from(e),
    );
  }

  for (const protocol of ['auto', '2025-11-25'] as const) {
    it(`is told apart from other failures by a v2-SDK server's -32602 naming the URI (${protocol === 'auto' ? '2026-07-28' : '2025-11-25'})`, async () => {
      const t = await connect(v2StdioServer(), { protocol, probeTimeoutMs: 3000 });
      const e = await failure(() => t.client.readResource('fixture://nope'));
      assert.equal(e.code, -32602);
      assert.equal(t.client.isResourceNotFound(e, 'fixture://nope'), true);
      assert.equal(t.client.isResourceNotFound(e, 'fixture://other'), protocol === 'auto', 'in 2025-11-25 only when it names this URI');
      assert.equal(t.client.isResourceNotFound(McpError.invalidParams('bad cursor'), 'fixture://nope'), protocol === 'auto');
      assert.equal(t.client.isResourceNotFound(new McpError(-32603, 'broken'), 'fixture://nope'), false);
    });
  }

  it('takes server-everything\'s -32603 "Unknown resource" for the failure it says it is', async () => {
    const t = await connect(everythingServer());
    const e = await failure(() => t.client.readResource('demo://resource/dynamic/text/not-a-number'));
    assert.equal(e.code, -32603);
    assert.equal(t.client.isResourceNotFound(e, 'demo://resource/dynamic/text/not-a-number'), false);
    assert.equal(t.client.isResourceNotFound(new McpError(-32002, 'Resource not found'), 'x://y'), true, "a server's -32002 always is");
  });
});
