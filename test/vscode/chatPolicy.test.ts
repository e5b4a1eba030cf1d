import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { api, repoRoot, setChatMcpRules as setRules, setServers, waitFor } from './helpers';

const fixture = () => path.join(repoRoot(), 'test', 'fixtures', 'gateway-upstream.mjs');

describe("VS Code's organisation lists of MCP servers, applied to shared servers", function () {
  this.timeout(120_000);
  after(async () => {
    await setRules({});
    await setServers(undefined);
  });

  it('keeps a server that chat.mcp.deniedServers names by its command line, or that an allow list leaves out, from the chat', async () => {
    const seam = await api();
    assert.ok(seam.sharing.available, 'this VS Code has no MCP server definition provider API');
    await setServers({
      up: { command: 'node', args: [fixture()], shareWithChat: true },
      twin: { command: 'node', args: [fixture(), 'twin'], shareWithChat: true },
    });
    const offered = () =>
      seam.sharing
        .sharedServers()
        .map((s) => s.name)
        .sort()
        .join();
    await waitFor(() => offered() === 'twin,up', 'both servers shared');

    // VS Code sees only the gateway's address; MCP Host matches the command line behind it.
    await setRules({ deniedServers: [{ serverCommand: ['node', fixture()] }] });
    await waitFor(() => offered() === 'twin', 'the denied command line to be withheld');
    const row = (name: string) => String(seam.tree.getTreeItem({ kind: 'server', server: seam.host.registry.get(name)! }).description);
    // The deny list holds for starting too (docs/teams.md): the row says so, and the running server is stopped.
    assert.match(row('up'), /^managed by your organisation · withheld from chat by chat\.mcp\.deniedServers · /);
    await waitFor(() => seam.host.registry.get('up')?.state.kind === 'error', 'up to be stopped');
    assert.match(row('twin'), /^shared with chat · /);

    await setRules({ allowedServers: [{ serverName: 'twin' }] });
    await waitFor(() => offered() === 'twin', 'only the allowed server');

    await setRules({});
    await waitFor(() => offered() === 'twin,up', 'both again once the lists are gone');
  });
});
