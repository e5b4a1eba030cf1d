import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AuditRecord } from '../../src/core';
import type { AuditLog } from '../../src/core/policy/audit';
import type { OutsideRootsQuestion } from '../../src/vscode/common/answers';
import { fenceMode, outsideRootsDetail } from '../../src/vscode/policy/gate';
import { toResourceUri } from '../../src/vscode/resources/uri';
import type { HostUi } from '../../src/vscode/ui/hostUi';
import { api, running, serverScript, setServers, waitFor } from './helpers';

const everything = (extra: Record<string, unknown> = {}) => ({
  command: 'node',
  args: [serverScript('server-everything'), 'stdio'],
  ...extra,
});
const config = () => vscode.workspace.getConfiguration('mcpHost');
const folder = () => vscode.workspace.workspaceFolders![0];

/** The gate's audit records written so far for `server` (not the server's own requests of us, such as roots/list), once the log has written what it was given. */
async function auditRecords(server: string): Promise<AuditRecord[]> {
  const a = await api();
  await (a.host.audit as AuditLog).flushed();
  const text = await fs.readFile(a.host.auditFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as AuditRecord)
    .filter((r) => r.server.name === server && r.origin !== 'server');
}

describe('the gate in a real VS Code: the roots fence, the audit, "always" by server identity', function () {
  this.timeout(120_000);
  /** Every tools/call the host wrote to a server, by the server's own trace (not a sleep). */
  const sent: Array<{ server: string; name?: string; args?: unknown }> = [];
  const traces: Array<{ dispose(): void }> = [];
  let saved: Pick<HostUi, 'confirmTool' | 'allowOutsideRoots' | 'notify' | 'allowLaunch'>;

  const watch = async (name: string) => {
    const a = await api();
    const h = await running(a, name);
    traces.push(
      h.onTrace((e) => {
        const m = e.message as { method?: string; params?: { name?: string; arguments?: unknown } };
        if (e.direction === 'out' && m.method === 'tools/call')
          sent.push({ server: name, name: m.params?.name, args: m.params?.arguments });
      }),
    );
    return h;
  };

  before(async () => {
    const a = await api();
    saved = {
      confirmTool: a.ui.confirmTool,
      allowOutsideRoots: a.ui.allowOutsideRoots,
      notify: a.ui.notify,
      allowLaunch: a.ui.allowLaunch,
    };
    a.ui.allowLaunch = async () => 'allow';
  });
  afterEach(async () => {
    const a = await api();
    for (const t of traces.splice(0)) t.dispose();
    sent.splice(0);
    Object.assign(a.ui, saved);
    a.ui.allowLaunch = async () => 'allow';
    await config().update('roots.fence', undefined, vscode.ConfigurationTarget.Global);
    await config().update('roots.extra', undefined, vscode.ConfigurationTarget.Global);
    await setServers(undefined, vscode.ConfigurationTarget.Workspace);
    await setServers(undefined);
  });
  after(async () => {
    const a = await api();
    Object.assign(a.ui, saved);
  });

  it('fences each origin with the user setting, and with its own default when that is unset (editor gate and chat gateway alike)', async () => {
    const origins = ['person', 'app', 'chat'] as const;
    assert.deepEqual(
      origins.map((o) => fenceMode(o)),
      ['ask', 'block', 'block'],
    );
    await config().update('roots.fence', 'off', vscode.ConfigurationTarget.Global);
    assert.deepEqual(
      origins.map((o) => fenceMode(o)),
      ['off', 'off', 'off'],
    );
  });

  it('asks for a path outside the roots in one modal: Cancel sends nothing, Allow Once sends, and every call is audited', async () => {
    const a = await api();
    await setServers({ 'fence-ask': everything() });
    const h = await watch('fence-ask');
    const echo = h.tools.find((t) => t.name === 'echo')!;
    const questions: OutsideRootsQuestion[] = [];
    a.ui.confirmTool = async () => assert.fail('the read-only echo of a trusted server needs no confirmation');
    a.ui.allowOutsideRoots = async (q) => (questions.push(q), 'cancel');
    assert.equal(await a.tools.call(h, echo, { message: '/etc/passwd' }), undefined, 'Cancel: no call');
    assert.equal(questions.length, 1);
    const detail = outsideRootsDetail(questions[0]);
    assert.match(detail, /argument \/message = "\/etc\/passwd" is \/etc\/passwd/, detail);
    assert.ok(detail.includes(folder().uri.toString()), `the roots are shown: ${detail}`);
    assert.equal(questions[0].tool, undefined, 'no tool confirmation was due, so "always" is not offered');

    a.ui.allowOutsideRoots = async (q) => (questions.push(q), 'once');
    const record = await a.tools.call(h, echo, { message: '/etc/hostname' });
    assert.equal(record?.outcome, 'ok');
    // The server's own trace: the call allowed is there, the one cancelled never was.
    assert.deepEqual(sent, [{ server: 'fence-ask', name: 'echo', args: { message: '/etc/hostname' } }]);
    // Inside the roots nothing is asked.
    await a.tools.call(h, echo, { message: `${folder().uri.fsPath}/notes.txt` });
    assert.equal(questions.length, 2);

    const records = await waitFor(async () => {
      const r = await auditRecords('fence-ask');
      return r.length >= 3 && r;
    }, 'the three audit records');
    assert.deepEqual(
      records.map((r) => [r.origin, r.method, r.name, r.decision, r.outcome.kind, r.fenced?.[0]?.resolved]),
      [
        ['person', 'tools/call', 'echo', 'asked-refused', 'not-sent', '/etc/passwd'],
        ['person', 'tools/call', 'echo', 'asked-allowed', 'ok', '/etc/hostname'],
        ['person', 'tools/call', 'echo', 'allowed', 'ok', undefined],
      ],
    );
    assert.deepEqual(records[0].arguments, { message: '/etc/passwd' });
  });

  it('mcpHost.roots.extra widens the roots: roots/list answers it, and the fence lets its paths through', async () => {
    const a = await api();
    await setServers({ 'fence-extra': everything() });
    const h = await watch('fence-extra');
    const extra = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-gate-extra-'));
    const uri = vscode.Uri.file(extra).toString();
    const rootsListed = async () => {
      const { result } = await h.rawClient!.callTool('get-roots-list', {});
      return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
    };
    await waitFor(async () => {
      await h.refresh('tools');
      return h.tools.some((t) => t.name === 'get-roots-list');
    }, 'get-roots-list');
    assert.ok(!(await rootsListed()).includes(uri));
    await config().update('roots.extra', [extra], vscode.ConfigurationTarget.Global);
    await waitFor(async () => (await rootsListed()).includes(uri), 'roots/list to answer the extra root');
    a.ui.allowOutsideRoots = async () => assert.fail('a path under mcpHost.roots.extra is inside the roots');
    const record = await a.tools.call(
      h,
      h.tools.find((t) => t.name === 'echo')!,
      { message: path.join(extra, 'notes.txt') },
    );
    assert.equal(record?.outcome, 'ok');
    await fs.rm(extra, { recursive: true, force: true });
  });

  it('"always" in the combined question remembers the tool only, never the path outside the roots', async () => {
    const a = await api();
    await setServers({ 'fence-always': everything({ trustAnnotations: false }) });
    const h = await watch('fence-always');
    const echo = h.tools.find((t) => t.name === 'echo')!;
    const questions: OutsideRootsQuestion[] = [];
    const confirmed: string[] = [];
    a.ui.allowOutsideRoots = async (q) => (questions.push(q), 'always');
    a.ui.confirmTool = async (_s, tool) => (confirmed.push(tool.name), 'once');
    await a.tools.call(h, echo, { message: '/etc/passwd' });
    assert.ok(questions[0].tool, 'the tool confirmation is part of the one question');
    assert.match(outsideRootsDetail(questions[0]), /not trusted \(setting trustAnnotations\)/);
    assert.deepEqual(confirmed, [], 'one modal, not two');
    await a.tools.call(h, echo, { message: 'inside' });
    assert.deepEqual(confirmed, [], 'the tool is remembered');
    await a.tools.call(h, echo, { message: '/etc/passwd' });
    assert.equal(questions.length, 2, 'the path outside the roots asks again');
    assert.equal(questions[1].tool, undefined, 'now only for the path');
  });

  it('block refuses before sending, names the argument, the path and mcpHost.roots.extra, and the history marks it', async () => {
    const a = await api();
    await config().update('roots.fence', 'block', vscode.ConfigurationTarget.Global);
    await setServers({ 'fence-block': everything() });
    const h = await watch('fence-block');
    const echo = h.tools.find((t) => t.name === 'echo')!;
    const told: string[] = [];
    a.ui.allowOutsideRoots = async () => assert.fail('block does not ask');
    a.ui.notify = async (_severity, message) => (told.push(message), undefined);
    assert.equal(await a.tools.call(h, echo, { message: '../../../../../../../../etc/passwd' }), undefined);
    assert.equal(told.length, 1);
    assert.match(told[0], /\/message = "\.\.\/\.\.\/.*etc\/passwd" is \/etc\/passwd/, told[0]);
    assert.match(told[0], /mcpHost\.roots\.extra/);
    assert.equal(a.tools.history[0].outcome, 'refused');
    // A call that passes afterwards is the first the server sees.
    await a.tools.call(h, echo, { message: 'after' });
    assert.deepEqual(
      sent.map((s) => s.args),
      [{ message: 'after' }],
    );
    // A resource document of a file: URI outside the roots is not read either.
    await assert.rejects(Promise.resolve(vscode.workspace.fs.readFile(toResourceUri('fence-block', 'file:///etc/passwd', 'passwd'))));
    const records = await waitFor(async () => {
      const r = await auditRecords('fence-block');
      return r.length >= 3 && r;
    }, 'the audit records');
    assert.deepEqual(
      records.map((r) => [r.origin, r.method, r.decision, r.outcome.kind]),
      [
        ['person', 'tools/call', 'fenced', 'not-sent'],
        ['person', 'tools/call', 'allowed', 'ok'],
        ['person', 'resources/read', 'fenced', 'not-sent'],
      ],
    );
    assert.equal(records[2].name, 'file:///etc/passwd');
  });

  it("block reads variables as the server has them: its entry's, and its PWD, the folder it runs in", async () => {
    const a = await api();
    await config().update('roots.fence', 'block', vscode.ConfigurationTarget.Global);
    // Unset (as in this editor's own environment), `${MCP_FENCE_UP:-inside}` stays in the folder; as the server has it, it climbs out.
    await setServers({ 'fence-env': everything({ env: { MCP_FENCE_UP: '../../..' } }) });
    const h = await watch('fence-env');
    const echo = h.tools.find((t) => t.name === 'echo')!;
    const told: string[] = [];
    a.ui.notify = async (_severity, message) => (told.push(message), undefined);
    assert.equal(await a.tools.call(h, echo, { message: '${MCP_FENCE_UP:-inside}/x' }), undefined);
    assert.equal(told.length, 1, told.join('\n'));
    // The server runs in the workspace folder, and its PWD says so: a file there is sent.
    await a.tools.call(h, echo, { message: '${PWD}/notes.txt' });
    assert.deepEqual(
      sent.map((s) => s.args),
      [{ message: '${PWD}/notes.txt' }],
      told.join('\n'),
    );
  });

  it('asks once about a read outside the roots: the same URI read again (a refresh) reuses the answer, audited as allowed-always', async () => {
    const a = await api();
    await setServers({ 'fence-reread': everything() });
    await watch('fence-reread');
    const asked: string[] = [];
    a.ui.allowOutsideRoots = async (q) => (asked.push(q.name), 'once');
    a.ui.notify = async () => undefined;
    const read = () => Promise.resolve(vscode.workspace.fs.readFile(toResourceUri('fence-reread', 'file:///etc/hostname', 'hostname')));
    // server-everything has no such resource: each read reaches it and fails there, after the gate let it through.
    await read().catch(() => undefined);
    await read().catch(() => undefined);
    assert.deepEqual(asked, ['file:///etc/hostname'], 'asked once');
    const records = await waitFor(async () => {
      const r = (await auditRecords('fence-reread')).filter((x) => x.method === 'resources/read');
      return r.length >= 2 && r;
    }, 'the audit records');
    assert.deepEqual(
      records.map((r) => r.decision),
      ['asked-allowed', 'allowed-always'],
    );
    // Another URI outside the roots is asked about.
    await Promise.resolve(vscode.workspace.fs.readFile(toResourceUri('fence-reread', 'file:///etc/passwd', 'passwd'))).catch(
      () => undefined,
    );
    assert.deepEqual(asked, ['file:///etc/hostname', 'file:///etc/passwd']);
  });

  it("audits the person's argument completion in Get Prompt: each completion/complete the picker sends goes through the gate", async () => {
    const a = await api();
    await setServers({ 'gate-complete': everything() });
    const h = await running(a, 'gate-complete');
    const wire: string[] = [];
    traces.push(
      h.onTrace((e) => {
        const m = e.message as { method?: string; params?: { ref?: { name?: string }; argument?: { name?: string } } };
        if (e.direction === 'out' && m.method === 'completion/complete') wire.push(`${m.params?.ref?.name} › ${m.params?.argument?.name}`);
      }),
    );
    // The picker asks for suggestions for the empty value as soon as it opens.
    const asked = a.prompts.run({ server: h, prompt: { name: 'completable-prompt', arguments: [{ name: 'department', required: true }] } });
    const records = await waitFor(async () => {
      const r = (await auditRecords('gate-complete')).filter((x) => x.method === 'completion/complete');
      return r.length >= 1 && r;
    }, 'an audit record of the completion request');
    assert.deepEqual(
      records.map((r) => [r.origin, r.name, r.decision, r.outcome.kind]),
      [['person', 'completable-prompt › department', 'allowed', 'ok']],
    );
    assert.deepEqual(wire, ['completable-prompt › department'], 'what was sent is what was audited');
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    assert.equal(await asked, undefined);
  });

  it("refuses an app's call outside the roots by default, and audits it with origin app", async () => {
    const a = await api();
    await setServers({ 'fence-app': everything() });
    const h = await watch('fence-app');
    a.ui.allowOutsideRoots = async () => assert.fail('an app is not asked about by default');
    a.ui.notify = async () => undefined;
    await assert.rejects(a.tools.callForApp(h, 'echo', { message: '../../../../../../etc/shadow' }), /outside the roots/);
    const ok = await a.tools.callForApp(h, 'echo', { message: 'fine' });
    assert.match(JSON.stringify(ok.content), /fine/);
    assert.deepEqual(
      sent.map((s) => s.args),
      [{ message: 'fine' }],
    );
    assert.equal(a.tools.history[1].outcome, 'refused');
    assert.equal(a.tools.history[1].by, 'app');
    const records = await waitFor(async () => {
      const r = await auditRecords('fence-app');
      return r.length >= 2 && r;
    }, 'the audit records');
    assert.deepEqual(
      records.map((r) => [r.origin, r.decision, r.outcome.kind]),
      [
        ['app', 'fenced', 'not-sent'],
        ['app', 'allowed', 'ok'],
      ],
    );
  });

  it('does not hand a user server\'s "always" to a workspace server of the same name', async () => {
    const a = await api();
    await setServers({ twin: everything({ trustAnnotations: false }) });
    let h = await watch('twin');
    const asked: string[] = [];
    a.ui.confirmTool = async (_s, tool) => (asked.push(tool.name), 'always');
    await a.tools.call(
      h,
      h.tools.find((t) => t.name === 'echo')!,
      { message: 'one' },
    );
    await a.tools.call(
      h,
      h.tools.find((t) => t.name === 'echo')!,
      { message: 'two' },
    );
    assert.deepEqual(asked, ['echo'], 'the user server asks once');
    // The same name in the workspace's settings replaces it: another server, asked again.
    // Its own env gives it a launch of its own, so its consent (for this session) covers no other suite's workspace server.
    await setServers({ twin: everything({ env: { MCP_HOST_GATE_TEST: 'twin' } }) }, vscode.ConfigurationTarget.Workspace);
    h = await waitFor(() => {
      const w = a.host.registry.get('twin');
      return w?.definition.origin.scope === 'workspace' && w.state.kind === 'running' && w;
    }, 'the workspace twin to run');
    await a.tools.call(
      h,
      h.tools.find((t) => t.name === 'echo')!,
      { message: 'three' },
    );
    assert.deepEqual(asked, ['echo', 'echo'], 'the workspace server is asked');
  });
});
