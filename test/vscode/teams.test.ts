import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import type { AuditRecord } from '../../src/core';
import type { AuditLog } from '../../src/core/policy/audit';
import type { HostUi } from '../../src/vscode/ui/hostUi';
import { api, repoRoot, running, serverScript, setChatMcpRules, setServers, waitFor } from './helpers';
import * as path from 'node:path';

/**
 * The managed policy file MCP Host reads on Linux: VS Code's own path. The VS Code in code-server
 * applies no policy to extensions (its workbench's policy service reads account policies only), so
 * this is how an organisation locks MCP Host there; the test writes it as root and removes it.
 */
const POLICY_FILE = '/etc/vscode/policy.json';

const config = () => vscode.workspace.getConfiguration('mcpHost');

describe("teams: an organisation's policy in a real VS Code", function () {
  this.timeout(120_000);
  let saved: Pick<HostUi, 'allowOutsideRoots' | 'notify'>;

  before(async function () {
    // Never overwrite a real policy of this machine.
    if (
      await fs.stat(POLICY_FILE).then(
        () => true,
        () => false,
      )
    )
      this.skip();
    const a = await api();
    saved = { allowOutsideRoots: a.ui.allowOutsideRoots, notify: a.ui.notify };
  });

  let madeFolder = false;
  after(async () => {
    await fs.rm(POLICY_FILE, { force: true });
    if (madeFolder) await fs.rmdir('/etc/vscode').catch(() => undefined);
    await config().update('roots.fence', undefined, vscode.ConfigurationTarget.Global);
    const a = await api();
    if (saved) Object.assign(a.ui, saved);
  });

  it("VS Code's deny list keeps a server from starting at all, not only from the chat, and the view says which setting", async () => {
    const a = await api();
    const fixture = path.join(repoRoot(), 'test', 'fixtures', 'gateway-upstream.mjs');
    await setChatMcpRules({ deniedServers: [{ serverName: 'org-denied' }] });
    try {
      await setServers({ 'org-denied': { command: 'node', args: [fixture] } });
      const h = await waitFor(() => {
        const handle = a.host.registry.get('org-denied');
        return handle?.state.kind === 'error' && handle;
      }, 'the denied server to fail to start');
      assert.equal(h.state.kind, 'error');
      assert.match(
        h.state.kind === 'error' ? h.state.message : '',
        /org-denied does not start: your organisation's chat\.mcp\.deniedServers does not allow it/,
      );
    } finally {
      await setChatMcpRules({});
      await setServers(undefined);
    }
  });

  it('a server the managed file newly denies is stopped while it runs, and says why', async () => {
    const a = await api();
    const notices: string[] = [];
    a.ui.notify = async (_severity, message) => {
      notices.push(String(message));
      return undefined;
    };
    madeFolder = (await fs.mkdir('/etc/vscode', { recursive: true })) !== undefined || madeFolder;
    await setServers({
      'org-late': { command: 'node', args: [serverScript('server-everything'), 'stdio'] },
      'org-kept': { command: 'node', args: [serverScript('server-everything'), 'stdio'] },
    });
    try {
      const late = await running(a, 'org-late');
      await running(a, 'org-kept');
      const pid = late.pid;
      assert.ok(pid, 'org-late runs as a process');
      // The administrator denies it: only the file changes, no setting (VS Code does not apply the file's policies here).
      await fs.writeFile(POLICY_FILE, JSON.stringify({ ChatDeniedMcpServers: JSON.stringify([{ serverName: 'org-late' }]) }));
      const state = await waitFor(() => {
        const s = a.host.registry.get('org-late')?.state;
        return s?.kind === 'error' && s;
      }, 'org-late to be stopped');
      assert.equal(
        state.kind === 'error' && state.message,
        "org-late was stopped: your organisation's chat.mcp.deniedServers no longer allows it",
      );
      assert.equal(state.kind === 'error' && state.restartAt, undefined, 'it is not restarted');
      await waitFor(() => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      }, "org-late's process to end");
      assert.deepEqual(notices, ["org-late was stopped: your organisation's chat.mcp.deniedServers no longer allows it"]);
      assert.equal(a.host.registry.get('org-kept')?.state.kind, 'running', 'a server the policy allows keeps running');
      // The Servers view says the organisation decides, on the row and in its tooltip; not on the other row.
      const item = (name: string) => a.tree.getTreeItem({ kind: 'server', server: a.host.registry.get(name)! });
      assert.match(String(item('org-late').description), /^managed by your organisation · error: org-late was stopped/);
      assert.match(
        (item('org-late').tooltip as vscode.MarkdownString).value,
        /Managed by your organisation: its chat\.mcp\.deniedServers keeps this server from running\./,
      );
      assert.doesNotMatch(String(item('org-kept').description), /organisation/);
      assert.doesNotMatch((item('org-kept').tooltip as vscode.MarkdownString).value, /organisation/);
      // Started again by the person: refused, with the reason.
      await assert.rejects(
        a.host.registry.get('org-late')!.start(),
        /org-late does not start: your organisation's chat\.mcp\.deniedServers/,
      );
    } finally {
      await fs.rm(POLICY_FILE, { force: true });
      await setServers(undefined);
    }
  });

  it("a locked fence holds: the person's `off` does not loosen it, nothing reaches the server, the audit says fenced", async () => {
    madeFolder = (await fs.mkdir('/etc/vscode', { recursive: true })) !== undefined || madeFolder;
    await fs.writeFile(POLICY_FILE, JSON.stringify({ McpHostRootsFence: 'block' }));
    // The person turns the fence off in their own settings: the organisation's value stands.
    await config().update('roots.fence', 'off', vscode.ConfigurationTarget.Global);
    const a = await api();
    await setServers({ 'org-fenced': { command: 'node', args: [serverScript('server-everything'), 'stdio'] } });
    const h = await running(a, 'org-fenced');
    const sent: unknown[] = [];
    const trace = h.onTrace((e) => {
      const m = e.message as { method?: string; params?: { arguments?: unknown } };
      if (e.direction === 'out' && m.method === 'tools/call') sent.push(m.params?.arguments);
    });
    try {
      a.ui.allowOutsideRoots = async () => assert.fail('a locked block does not ask');
      a.ui.notify = async () => undefined;
      const echo = h.tools.find((t) => t.name === 'echo')!;
      assert.equal(await a.tools.call(h, echo, { message: '/etc/shadow' }), undefined);
      assert.deepEqual(sent, [], 'the call never reached the server');
      const records = await waitFor(async () => {
        await (a.host.audit as AuditLog).flushed();
        const text = await fs.readFile(a.host.auditFile, 'utf8').catch(() => '');
        const mine = text
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l) as AuditRecord)
          .filter((r) => r.server.name === 'org-fenced' && r.method === 'tools/call');
        return mine.length >= 1 && mine;
      }, 'the audit record');
      assert.equal(records[0].decision, 'fenced');
      // Without the organisation's file, the person's `off` is theirs to choose.
      await fs.rm(POLICY_FILE, { force: true });
      await config().update('roots.fence', undefined, vscode.ConfigurationTarget.Global);
      await config().update('roots.fence', 'off', vscode.ConfigurationTarget.Global);
      await a.tools.call(h, echo, { message: '/etc/shadow' });
      assert.deepEqual(sent, [{ message: '/etc/shadow' }]);
    } finally {
      trace.dispose();
    }
  });
});
