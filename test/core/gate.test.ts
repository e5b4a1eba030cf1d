import { strict as assert } from 'node:assert';
import type { Tool } from '../../src/core/protocol/types';
import { decide, defaultFenceMode, type GateContext } from '../../src/core/policy/gate';
import { GatedServer } from '../../src/core/policy/gated';
import { MAX_ARGUMENT_CHARS, MAX_ARGUMENT_DEPTH } from '../../src/core/policy/limits';
import { OVERSIZED_ARGUMENTS, runGated } from '../../src/core/policy/run';
import { toolDefinitionHash } from '../../src/core/policy/pins';
import type { AuditEntry } from '../../src/core/policy/types';
import { McpError } from '../../src/core/protocol/errors';
import { closeAll, connect, everythingServer } from '../helpers/servers';

const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({ name, inputSchema: { type: 'object' }, ...extra });
const ctx = (over: Partial<GateContext> = {}): GateContext => ({
  origin: 'person',
  policy: { tools: {}, autoApprove: [], trustAnnotations: false },
  alwaysAllowed: false,
  fence: 'ask',
  roots: [{ uri: 'file:///ws' }],
  machine: { platform: 'linux', lstat: async () => undefined, readlink: async () => Promise.reject(new Error('EINVAL')), home: '/home/me' },
  ...over,
});
const call = (t: Tool, args: Record<string, unknown> = {}) => ({ method: 'tools/call' as const, tool: t, arguments: args });

describe('the gate (core/policy/gate)', () => {
  it('defaults: ask for the person, block for an app and the chat', () => {
    assert.deepEqual(
      ['person', 'app', 'chat'].map((o) => defaultFenceMode(o as GateContext['origin'])),
      ['ask', 'block', 'block'],
    );
  });

  it('refuses a denied tool for every origin', async () => {
    for (const origin of ['person', 'app', 'chat', 'cli'] as const) {
      const v = await decide(
        call(tool('rm')),
        ctx({ origin, policy: { tools: { deny: ['r*'] }, autoApprove: [], trustAnnotations: false } }),
      );
      assert.equal(v.kind === 'refuse' && v.decision, 'denied', origin);
    }
    const allowList = await decide(
      call(tool('other')),
      ctx({ policy: { tools: { allow: ['echo'] }, autoApprove: [], trustAnnotations: false } }),
    );
    assert.equal(allowList.kind, 'refuse');
  });

  it('keeps visibility: app-only tools from the person and the chat, model-only ones from apps', async () => {
    const appOnly = tool('helper', { _meta: { ui: { visibility: ['app'] } } });
    const modelOnly = tool('secret', { _meta: { ui: { visibility: ['model'] } } });
    assert.equal((await decide(call(appOnly), ctx({ origin: 'person' }))).kind, 'refuse');
    assert.equal((await decide(call(appOnly), ctx({ origin: 'chat' }))).kind, 'refuse');
    assert.equal((await decide(call(modelOnly), ctx({ origin: 'app' }))).kind, 'refuse');
    assert.equal((await decide(call(appOnly), ctx({ origin: 'app' }))).kind, 'ask');
  });

  it('asks to confirm unless trusted read-only, auto-approved or always allowed; the CLI is never asked', async () => {
    const ro = tool('read', { annotations: { readOnlyHint: true } });
    assert.deepEqual(await decide(call(ro), ctx()), { kind: 'ask', reasons: [{ kind: 'confirmTool', annotationsTrusted: false }] });
    assert.deepEqual(await decide(call(ro), ctx({ policy: { tools: {}, autoApprove: [], trustAnnotations: true } })), {
      kind: 'allow',
      decision: 'allowed',
    });
    assert.deepEqual(await decide(call(tool('w')), ctx({ policy: { tools: {}, autoApprove: ['w'], trustAnnotations: false } })), {
      kind: 'allow',
      decision: 'allowed',
    });
    assert.deepEqual(await decide(call(tool('w')), ctx({ alwaysAllowed: true })), { kind: 'allow', decision: 'allowed-always' });
    assert.deepEqual(await decide(call(tool('w')), ctx({ origin: 'cli', fence: 'off' })), { kind: 'allow', decision: 'allowed' });
  });

  it('a protected path (files that run later) in the arguments of a tool that may change things: asked, even auto-approved or always allowed; the CLI refuses; fence off lets it through', async () => {
    const write = tool('write_file');
    const args = { path: '/ws/.vscode/tasks.json', content: '{}' };
    const auto = { tools: {}, autoApprove: ['write_file'], trustAnnotations: true };
    for (const over of [{}, { policy: auto }, { alwaysAllowed: true }, { origin: 'chat' as const }, { fence: 'block' as const }]) {
      const v = await decide(call(write, args), ctx(over));
      assert.equal(v.kind, 'ask', JSON.stringify(over));
      assert.deepEqual(v.kind === 'ask' && v.reasons.find((r) => r.kind === 'protectedPaths'), {
        kind: 'protectedPaths',
        findings: [{ pointer: '/path', value: '/ws/.vscode/tasks.json', resolved: '/ws/.vscode/tasks.json' }],
      });
    }
    const cli = await decide(
      call(write, { file: 'nested/.git/hooks/pre-commit' }),
      ctx({ origin: 'cli', fence: 'block', serverCwd: '/ws' }),
    );
    assert.equal(cli.kind === 'refuse' && cli.decision, 'fenced');
    assert.match(
      cli.kind === 'refuse' ? cli.reason : '',
      /file that runs later .*\/file = "nested\/\.git\/hooks\/pre-commit" \(\/ws\/nested\/\.git\/hooks\/pre-commit\)/,
    );
    assert.deepEqual(await decide(call(write, args), ctx({ origin: 'cli', fence: 'off' })), { kind: 'allow', decision: 'allowed' });
    // A plain file of the root, or a tool that says it only reads, is not asked about for this.
    assert.deepEqual(await decide(call(write, { path: '/ws/src/a.ts' }), ctx({ policy: auto })), { kind: 'allow', decision: 'allowed' });
    const read = tool('read_file', { annotations: { readOnlyHint: true } });
    assert.deepEqual(await decide(call(read, args), ctx({ policy: auto })), { kind: 'allow', decision: 'allowed' });
  });

  it('fence: block refuses, ask asks, off lets it through; trust does not skip it', async () => {
    const trusted = { tools: {}, autoApprove: ['read'], trustAnnotations: true };
    const args = { path: '../../../etc/passwd' };
    const blocked = await decide(call(tool('read'), args), ctx({ fence: 'block', policy: trusted }));
    assert.equal(blocked.kind === 'refuse' && blocked.decision, 'fenced');
    assert.match(
      blocked.kind === 'refuse' ? blocked.reason : '',
      /\/path = "\.\.\/\.\.\/\.\.\/etc\/passwd" \(\/etc\/passwd\).*mcpHost\.roots\.extra/,
    );
    const asked = await decide(call(tool('read'), args), ctx({ fence: 'ask', policy: trusted }));
    assert.equal(asked.kind === 'ask' && asked.reasons[0].kind, 'outsideRoots');
    assert.deepEqual(await decide(call(tool('read'), args), ctx({ fence: 'off', policy: trusted })), {
      kind: 'allow',
      decision: 'allowed',
    });
    const cli = await decide(call(tool('read'), args), ctx({ origin: 'cli', fence: 'ask' }));
    assert.equal(cli.kind, 'refuse', 'no one to ask at the CLI');
  });

  it('fences resource URIs and prompt arguments', async () => {
    const read = await decide({ method: 'resources/read', uri: 'file:///etc/shadow' }, ctx({ origin: 'app', fence: 'block' }));
    assert.equal(read.kind === 'refuse' && read.decision, 'fenced');
    assert.deepEqual(await decide({ method: 'resources/subscribe', uri: 'file:///ws/a' }, ctx()), { kind: 'allow', decision: 'allowed' });
    const prompt = await decide({ method: 'prompts/get', name: 'p', arguments: { file: '/etc/passwd' } }, ctx({ fence: 'block' }));
    assert.equal(prompt.kind, 'refuse');
  });

  it("fences a completion's ref.uri and its values", async () => {
    const complete = (uri: string, value: string) => ({
      method: 'completion/complete' as const,
      params: { ref: { type: 'ref/resource' as const, uri }, argument: { name: 'name', value } },
    });
    const byRef = await decide(complete('file:///etc/{name}', ''), ctx({ fence: 'block' }));
    assert.deepEqual(byRef.kind === 'refuse' && byRef.fenced?.map((f) => f.pointer), ['/ref/uri']);
    const byValue = await decide(complete('file:///ws/{name}', '../../etc'), ctx({ fence: 'block' }));
    assert.deepEqual(byValue.kind === 'refuse' && byValue.fenced?.map((f) => f.pointer), ['/name']);
    assert.equal((await decide(complete('file:///ws/{name}', 'src'), ctx({ fence: 'block' }))).kind, 'allow');
  });

  it("checks a relative path against the server's working folder as well as the roots", async () => {
    const args = { path: 'notes.txt' };
    assert.equal((await decide(call(tool('read'), args), ctx({ origin: 'cli', serverCwd: '/ws' }))).kind, 'allow');
    const v = await decide(call(tool('read'), args), ctx({ origin: 'cli', serverCwd: '/srv' }));
    assert.deepEqual(v.kind === 'refuse' && v.fenced?.map((f) => f.resolved), ['/srv/notes.txt']);
  });

  it('refuses arguments over the limits first, whatever the fence and origin', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    for (const fence of ['off', 'block'] as const) {
      const v = await decide(call(tool('w'), { deep }), ctx({ origin: 'cli', fence }));
      assert.deepEqual(v, {
        kind: 'refuse',
        decision: 'refused',
        reason: `the arguments are nested deeper than ${MAX_ARGUMENT_DEPTH} levels`,
        oversized: true,
      });
    }
    let ok: unknown = 'x';
    for (let i = 0; i < MAX_ARGUMENT_DEPTH - 1; i++) ok = { a: ok };
    assert.equal((await decide(call(tool('w'), ok as Record<string, unknown>), ctx({ origin: 'cli' }))).kind, 'allow');
    const big = await decide({ method: 'resources/read', uri: `file:///ws/${'a'.repeat(MAX_ARGUMENT_CHARS)}` }, ctx());
    assert.match(big.kind === 'refuse' ? big.reason : '', /more than 4194304 characters/);
    const many = await decide(
      { method: 'prompts/get', name: 'p', arguments: Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, ''])) },
      ctx(),
    );
    assert.match(many.kind === 'refuse' ? many.reason : '', /more than 100000 values/);
  });
});

describe('runGated (core/policy/run): decide, ask, send, audit', () => {
  const server = { name: 'fs', scope: 'user' as const, definition: 'h' };
  const clock = () => 1_000;
  function sinkOf() {
    const entries: AuditEntry[] = [];
    return { entries, sink: { append: (e: AuditEntry) => entries.push(e) } };
  }

  it('sends an allowed call once and audits its outcome', async () => {
    const { entries, sink } = sinkOf();
    let sent = 0;
    const r = await runGated({
      request: call(tool('read', { annotations: { readOnlyHint: true } }), { path: '/ws/a' }),
      context: ctx({ policy: { tools: {}, autoApprove: [], trustAnnotations: true } }),
      server,
      audit: sink,
      send: async () => ++sent,
      outcomeOf: () => ({ kind: 'isError' }),
      auditedArguments: { path: '/ws/a' },
      now: clock,
    });
    assert.deepEqual(r, { sent: true, decision: 'allowed', result: 1 });
    assert.equal(sent, 1);
    assert.equal(entries.length, 1);
    assert.deepEqual(
      { ...entries[0], time: undefined },
      {
        time: undefined,
        origin: 'person',
        server,
        method: 'tools/call',
        name: 'read',
        arguments: { path: '/ws/a' },
        decision: 'allowed',
        outcome: { kind: 'isError' },
        ms: 0,
        // The hash of the definition the call ran under (core/policy/pins.ts), not the server's.
        tool: { definition: toolDefinitionHash(tool('read', { annotations: { readOnlyHint: true } })) },
      },
    );
  });

  it('audits arguments over the limits with a placeholder, never the arguments', async () => {
    const { entries, sink } = sinkOf();
    let deep: unknown = 'x';
    for (let i = 0; i < 3000; i++) deep = { a: deep };
    const r = await runGated({
      request: call(tool('w'), { deep }),
      context: ctx({ origin: 'cli', fence: 'off' }),
      server,
      audit: sink,
      auditedArguments: { deep },
      send: async () => assert.fail('sent'),
      now: clock,
    });
    assert.equal(r.sent, false);
    assert.deepEqual(
      entries.map((e) => [e.decision, e.outcome.kind, e.arguments]),
      [['refused', 'not-sent', OVERSIZED_ARGUMENTS]],
    );
  });

  it('never sends a refused or fenced call, and audits it as not sent', async () => {
    const { entries, sink } = sinkOf();
    const r = await runGated({
      request: call(tool('write'), { path: '../../etc/passwd' }),
      context: ctx({ origin: 'app', fence: 'block' }),
      server,
      audit: sink,
      send: async () => assert.fail('sent'),
      now: clock,
    });
    assert.equal(r.sent, false);
    assert.equal(!r.sent && r.decision, 'fenced');
    assert.match(!r.sent ? r.reason : '', /outside the roots/);
    assert.deepEqual(entries[0]?.outcome, { kind: 'not-sent' });
    assert.equal(entries[0]?.fenced?.[0]?.pointer, '/path');
  });

  it('asks once for every reason; a refusal sends nothing, a yes is asked-allowed', async () => {
    const { entries, sink } = sinkOf();
    const asked: string[][] = [];
    const run = (answer: 'once' | 'refuse') =>
      runGated({
        request: call(tool('write'), { path: '/etc/hosts' }),
        context: ctx(),
        server,
        audit: sink,
        ask: async (reasons) => (asked.push(reasons.map((x) => x.kind)), answer),
        send: async () => 'done',
        now: clock,
      });
    const no = await run('refuse');
    const yes = await run('once');
    assert.deepEqual(asked, [
      ['outsideRoots', 'confirmTool'],
      ['outsideRoots', 'confirmTool'],
    ]);
    assert.equal(no.sent, false);
    assert.deepEqual(yes, { sent: true, decision: 'asked-allowed', result: 'done' });
    assert.deepEqual(
      entries.map((e) => [e.decision, e.outcome.kind]),
      [
        ['asked-refused', 'not-sent'],
        ['asked-allowed', 'ok'],
      ],
    );
  });

  it('refuses an ask when nobody can be asked; the chat is not asked to confirm (VS Code did)', async () => {
    const r = await runGated({ request: call(tool('write')), context: ctx(), server, send: async () => assert.fail('sent') });
    assert.equal(!r.sent && r.decision, 'refused');
    const chat = await runGated({
      request: call(tool('write')),
      context: ctx({ origin: 'chat', fence: 'block' }),
      server,
      send: async () => 7,
    });
    assert.deepEqual(chat, { sent: true, decision: 'allowed', result: 7 });
  });

  it('audits a send that throws with its code, or as cancelled, and rethrows', async () => {
    const { entries, sink } = sinkOf();
    for (const error of [McpError.invalidParams('bad'), new McpError(-32800, 'stop')]) {
      await assert.rejects(
        runGated({
          request: { method: 'resources/read', uri: 'file:///ws/a' },
          context: ctx(),
          server,
          audit: sink,
          send: async () => {
            throw error;
          },
        }),
        error,
      );
    }
    assert.deepEqual(
      entries.map((e) => e.outcome),
      [{ kind: 'error', code: -32602 }, { kind: 'cancelled' }],
    );
  });
});

describe('GatedServer (core/policy/gated): the only way to send', function () {
  this.timeout(30_000);
  afterEach(closeAll);
  const server = { name: 'everything', scope: 'user' as const, definition: 'h' };

  it('sends completion/complete only when the gate allows it, never asks about it, and audits what was typed', async () => {
    const { client } = await connect(everythingServer());
    const wire: unknown[] = [];
    client.onTrace((e) => {
      const m = e.message as { method?: string; params?: { argument?: unknown } };
      if (e.direction === 'out' && m.method === 'completion/complete') wire.push(m.params?.argument);
    });
    const entries: AuditEntry[] = [];
    let asked = 0;
    const { origin: _, ...context } = ctx();
    const gate = new GatedServer({ name: 'everything', rawClient: client }, 'person', {
      context: () => context,
      server: () => server,
      audit: { append: (e) => entries.push(e) },
      ask: async () => (asked++, 'once'),
    });
    const ref = { type: 'ref/prompt' as const, name: 'completable-prompt' };
    const inside = await gate.complete({ ref, argument: { name: 'department', value: 'E' } });
    assert.deepEqual(inside.sent && inside.result.completion.values, ['Engineering']);
    // An earlier answer names a file outside the roots: the person's fence would ask, but nobody is asked while typing.
    const outside = await gate.complete({
      ref,
      argument: { name: 'name', value: '' },
      context: { arguments: { department: '/etc/passwd' } },
    });
    assert.equal(outside.sent, false);
    assert.equal(asked, 0);
    assert.deepEqual(wire, [{ name: 'department', value: 'E' }], 'only the allowed one reached the server');
    assert.deepEqual(
      entries.map((e) => [e.origin, e.method, e.name, e.decision, e.outcome.kind, e.arguments]),
      [
        ['person', 'completion/complete', 'completable-prompt › department', 'allowed', 'ok', { department: 'E' }],
        ['person', 'completion/complete', 'completable-prompt › name', 'refused', 'not-sent', { department: '/etc/passwd', name: '' }],
      ],
    );
  });

  it('refuses to send while the server does not run, and audits the failure', async () => {
    const entries: AuditEntry[] = [];
    const { origin: _, ...context } = ctx();
    const gate = new GatedServer({ name: 'stopped', rawClient: undefined }, 'app', {
      context: () => context,
      server: () => server,
      audit: { append: (e) => entries.push(e) },
    });
    await assert.rejects(gate.readResource('ui://stopped/app.html'), (e: McpError) => e.code === -32000);
    assert.deepEqual(
      entries.map((e) => [e.origin, e.decision, e.outcome]),
      [['app', 'allowed', { kind: 'error', code: -32000 }]],
    );
  });

  it('tells onFailed of a request that failed (an error, an isError result) with its text, and of nothing else', async () => {
    const { client } = await connect(everythingServer());
    const failed: Array<[string, string]> = [];
    const { origin: _, ...context } = ctx();
    const gate = new GatedServer({ name: 'everything', rawClient: client }, 'person', {
      context: () => ({ ...context, fence: 'off' }),
      server: () => server,
      ask: async () => 'once',
      onFailed: (request, text) => failed.push([request.method, text()]),
    });
    const echo = { name: 'echo', inputSchema: { type: 'object' as const } };
    assert.equal((await gate.callTool(echo, { message: '/home/p/fine.txt' })).sent, true);
    const missing = { name: 'no-such-tool', inputSchema: { type: 'object' as const } };
    const result = await gate.callTool(missing, {}).catch((e: McpError) => e);
    await assert.rejects(gate.readResource('demo://no/such/resource'));
    assert.deepEqual(
      failed.map(([method]) => method),
      ['tools/call', 'resources/read'],
      JSON.stringify({ failed, result }),
    );
    assert.equal(
      (result as { sent?: boolean; result?: { result?: { isError?: boolean } } }).result?.result?.isError,
      true,
      'an isError result, not a thrown error',
    );
    assert.match(failed[0][1], /no-such-tool/);
  });
});
