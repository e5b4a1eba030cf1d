import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LaunchSummary, SandboxBlocked } from '../../src/core';
import { consentDetail } from '../../src/vscode/policy/consent';
import type { TreeNode } from '../../src/vscode/tree/nodes';
import { serverTooltip } from '../../src/vscode/tree/serversTree';
import { api, repoRoot, running, setServers, waitFor } from './helpers';

const HOSTILE = () => path.join(repoRoot(), 'test', 'fixtures', 'hostile-sandbox-server.mjs');
const answer = (r: { content: Array<{ type: string; text?: string }> }): unknown => JSON.parse(r.content[0].text ?? 'null');

describe('sandbox: a stdio server with sandboxEnabled', function () {
  this.timeout(90_000);
  let outside: string;
  let inside: string;

  before(() => {
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-vscode-sandbox-'));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside secret');
    inside = vscode.workspace.workspaceFolders![0].uri.fsPath;
  });
  after(async () => {
    await setServers(undefined);
    await setServers(undefined, vscode.ConfigurationTarget.Workspace);
    fs.rmSync(outside, { recursive: true, force: true });
    fs.rmSync(path.join(inside, 'made-inside.txt'), { force: true });
  });

  it('reads and writes only the roots; an unsandboxed server beside it reads outside', async function () {
    if (process.platform !== 'linux') this.skip();
    const a = await api();
    const env = { HOSTILE_OUTSIDE: outside, HOSTILE_INSIDE: inside };
    await setServers({
      boxed: { command: 'node', args: [HOSTILE()], env, sandboxEnabled: true },
      open: { command: 'node', args: [HOSTILE()], env, sandboxEnabled: false },
    });
    const open = await running(a, 'open');
    assert.deepEqual(answer((await open.rawClient!.callTool('read_outside', {})).result), { ok: true, value: 'outside secret' });
    const boxed = await running(a, 'boxed');
    assert.equal((answer((await boxed.rawClient!.callTool('read_outside', {})).result) as { ok: boolean }).ok, false);
    assert.equal((answer((await boxed.rawClient!.callTool('write_outside', {})).result) as { ok: boolean }).ok, false);
    assert.ok(!fs.existsSync(path.join(outside, 'pwned.txt')));
    assert.deepEqual(answer((await boxed.rawClient!.callTool('write_inside', {})).result), { ok: true });
    assert.equal(fs.readFileSync(path.join(inside, 'made-inside.txt'), 'utf8'), 'inside');
    assert.equal((answer((await boxed.rawClient!.callTool('capabilities', {})).result) as { capEff: string }).capEff, '0000000000000000');
    // Neither server sees the extension host's VS Code hooks (there are some in its environment).
    assert.ok(Object.keys(process.env).some((k) => k.startsWith('VSCODE_')));
    for (const s of [open, boxed]) assert.deepEqual(answer((await s.rawClient!.callTool('editor_hooks', {})).result), []);
  });

  it('network.allowedDomains: an allowed name reaches a server on 127.0.0.1 through the proxy; a refused one is named by the event', async function () {
    if (process.platform !== 'linux') this.skip();
    const a = await api();
    const asked: string[] = [];
    const origin = http.createServer((req, res) => {
      asked.push(`${req.headers.host} ${req.url}`);
      res.end('origin answered');
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    const port = (origin.address() as net.AddressInfo).port;
    const blocked: SandboxBlocked[] = [];
    const listening = a.host.onSandboxBlocked((b) => blocked.push(b));
    try {
      const network = { allowedDomains: ['localhost'] };
      await setServers({
        reaches: {
          command: 'node',
          args: [HOSTILE()],
          env: { HOSTILE_URL: `http://localhost:${port}/in` },
          sandboxEnabled: true,
          sandbox: { network },
        },
        refused: {
          command: 'node',
          args: [HOSTILE()],
          env: { HOSTILE_URL: `http://127.0.0.1:${port}/past` },
          sandboxEnabled: true,
          sandbox: { network },
        },
      });
      const reaches = await running(a, 'reaches');
      assert.match(serverTooltip(reaches, (t) => t).value, /connects only to localhost, through MCP Host's proxy/);
      assert.deepEqual(answer((await reaches.rawClient!.callTool('proxy_get', {})).result), {
        ok: true,
        status: 200,
        body: 'origin answered',
      });
      const refused = await running(a, 'refused');
      assert.equal((answer((await refused.rawClient!.callTool('proxy_get', {})).result) as { status: number }).status, 403);
      assert.deepEqual(asked, [`localhost:${port} /in`]);
      assert.deepEqual(
        blocked.map((b) => b.message),
        [`sandbox blocked 127.0.0.1:${port}: add "127.0.0.1" to sandbox.network.allowedDomains of server "refused"`],
      );
    } finally {
      listening.dispose();
      origin.close();
    }
  });

  it('a workspace server started with the defaults is sandboxed: the consent and the tree say so, and it cannot read outside', async function () {
    if (process.platform !== 'linux') this.skip();
    const a = await api();
    const saved = a.ui.allowLaunch;
    const asked: LaunchSummary[] = [];
    a.ui.allowLaunch = async (launch) => {
      asked.push(launch);
      return 'allow';
    };
    try {
      await setServers(
        { 'ws-boxed': { command: 'node', args: [HOSTILE()], env: { HOSTILE_OUTSIDE: outside, HOSTILE_INSIDE: inside } } },
        vscode.ConfigurationTarget.Workspace,
      );
      const s = await running(a, 'ws-boxed');
      await waitFor(() => asked.length > 0, 'the consent');
      assert.match(consentDetail(asked[0]), /Sandboxed: it reads and writes only its roots/);
      const item = a.tree.getTreeItem({ kind: 'server', server: s } as TreeNode);
      assert.match(String(item.description), /^sandboxed · /);
      assert.equal((answer((await s.rawClient!.callTool('read_outside', {})).result) as { ok: boolean }).ok, false);
    } finally {
      a.ui.allowLaunch = saved;
    }
  });
});
