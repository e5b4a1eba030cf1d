import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  acceptedLaunch,
  envFileDigest,
  stdioParamsFor,
  launchCovers,
  launchSummary,
  parseServerDefinitions,
  policyGrant,
  withSandboxDefault,
  type ServerDefinition,
} from '../../src/core';

const one = (entry: Record<string, unknown>, scope: 'user' | 'workspace' | 'folder' = 'workspace'): ServerDefinition => {
  const { definitions, diagnostics } = parseServerDefinitions({ s: entry }, { scope });
  assert.deepEqual(diagnostics, []);
  return definitions[0];
};

const base = { command: 'node', args: ['server.js'], env: { A: '1' } };
/** Whether the answer given for `before` also answers for `after` (no new question). */
const covers = (before: Record<string, unknown>, after: Record<string, unknown>) =>
  launchCovers(acceptedLaunch(one(before)), acceptedLaunch(one(after)));
/** An answer stored before grants were part of the key: the launch hash alone. */
const legacyAnswer = (entry: Record<string, unknown>) => ({ launch: acceptedLaunch(one(entry)).launch });

describe('launch consent: what a definition lets its server do without asking', () => {
  it('finds nothing to consent to in a definition that loosens nothing, or only tightens', () => {
    for (const tightening of [
      {},
      { sampling: { mode: 'ask', models: ['gpt-4o'], maxTokensPerHour: 10 } },
      { sampling: { mode: 'deny' } },
      { tools: { deny: ['write_*'] } },
      { tools: { allow: ['read_*'] } },
      { trustAnnotations: false },
      { autoApprove: [] },
    ]) {
      assert.equal(policyGrant(one({ ...base, ...tightening })), undefined, JSON.stringify(tightening));
      assert.ok(
        launchCovers(legacyAnswer(base), acceptedLaunch(one({ ...base, ...tightening }))),
        `an earlier answer covers ${JSON.stringify(tightening)}`,
      );
    }
  });

  it('names sampling "allow" with its models and budgets, autoApprove, trustAnnotations and the tools they reach, as written', () => {
    const def = one({
      ...base,
      sampling: { mode: 'allow', models: ['gpt-4o', 'GPT-4o', 'claude'], maxTokensPerHour: 5000 },
      autoApprove: ['write_file', 'echo'],
      trustAnnotations: true,
      tools: { allow: ['echo', 'write_*'], deny: ['delete_*'] },
    });
    assert.deepEqual(policyGrant(def), {
      sampling: { models: ['GPT-4o', 'claude', 'gpt-4o'], maxTokensPerHour: 5000 },
      autoApprove: ['echo', 'write_file'],
      trustAnnotations: true,
      tools: { allow: ['echo', 'write_*'], deny: ['delete_*'] },
    });
    assert.deepEqual(launchSummary(def, undefined).grant, policyGrant(def), 'the consent shows what it keys on');
    assert.equal(
      policyGrant(one({ ...base, tools: { allow: ['echo'] }, sampling: { mode: 'allow' } }))?.tools,
      undefined,
      'tools.allow alone skips no question',
    );
  });

  it('counts trustAnnotations only where it is not the default, and a user server never asks', () => {
    assert.equal(policyGrant(one({ ...base, trustAnnotations: true }, 'folder'))?.trustAnnotations, true);
    assert.equal(policyGrant(one(base, 'user')), undefined, 'user servers trust annotations by default and are not asked about');
  });

  it("counts shareWithChat of a workspace or folder server as a loosening, never a user server's", () => {
    assert.equal(policyGrant(one({ ...base, shareWithChat: true }))?.shareWithChat, true);
    assert.equal(policyGrant(one({ ...base, shareWithChat: true }, 'user')), undefined);
    assert.equal(covers({ ...base, shareWithChat: true }, base), true, 'stopping sharing only narrows');
  });

  it('asks again when a loosening key is added after an answer that did not show it', () => {
    for (const loosening of [
      { sampling: { mode: 'allow' } },
      { autoApprove: ['echo'] },
      { trustAnnotations: true },
      { shareWithChat: true },
    ]) {
      const after = { ...base, ...loosening };
      assert.equal(
        launchCovers(legacyAnswer(base), acceptedLaunch(one(after))),
        false,
        `a stored "Always" covers ${JSON.stringify(loosening)}`,
      );
      assert.ok(covers(after, after), 'the same grant is covered');
    }
    assert.equal(covers({ ...base, autoApprove: ['echo'] }, { ...base, autoApprove: ['echo', 'write_file'] }), false, 'a tool more');
    assert.equal(covers({ ...base, autoApprove: ['echo'] }, { ...base, autoApprove: ['echo'], trustAnnotations: true }), false);
    assert.equal(covers({ ...base, sampling: { mode: 'allow' } }, { ...base, sampling: { mode: 'allow' }, autoApprove: ['echo'] }), false);
    assert.equal(
      covers({ ...base, autoApprove: ['echo'] }, { ...base, autoApprove: ['echo'], env: { A: '2' } }),
      false,
      'the launch itself still counts',
    );
  });

  it('asks again when budgets are raised or removed and models widened under "allow", not when they are lowered or narrowed', () => {
    const allow = (sampling: Record<string, unknown>) => ({ ...base, sampling: { mode: 'allow', ...sampling } });
    const limits = { models: ['gpt-4o', 'claude'], maxTokensPerRequest: 100, maxTokensPerHour: 1000, maxRequestsPerMinute: 5 };
    const capped = allow(limits);
    const { maxTokensPerHour: _removed, ...withoutHourly } = limits;
    assert.equal(covers(capped, allow(withoutHourly)), false, 'the hourly budget removed');
    for (const raised of [
      { maxTokensPerRequest: 101 },
      { maxTokensPerHour: 1001 },
      { maxRequestsPerMinute: 6 },
      { models: [] },
      { models: ['gpt-4o', 'o3'] },
    ]) {
      assert.equal(covers(capped, allow({ ...limits, ...raised })), false, JSON.stringify(raised));
    }
    for (const lowered of [{ maxTokensPerRequest: 50 }, { maxTokensPerHour: 10 }, { maxRequestsPerMinute: 1 }, { models: ['CLAUDE'] }]) {
      assert.ok(covers(capped, allow({ ...limits, ...lowered })), JSON.stringify(lowered));
    }
    assert.ok(covers(allow({}), capped), 'an answer for no limits covers any limits');
    assert.ok(covers(capped, { ...base, sampling: { mode: 'ask' } }), 'back to asking');
    assert.ok(covers(capped, { ...base, sampling: { mode: 'deny' } }), 'denying');
  });

  it('asks again when the tools autoApprove or trustAnnotations can reach grow, not when they shrink', () => {
    const reach = (tools: Record<string, unknown>) => ({ ...base, autoApprove: ['write_file'], tools });
    assert.equal(covers(reach({ allow: ['read_*'] }), reach({})), false, 'tools.allow dropped: write_file is offered and auto-approved');
    assert.equal(covers(reach({ allow: ['read_*'] }), reach({ allow: ['read_*', 'write_*'] })), false);
    assert.equal(covers(reach({ deny: ['write_*'] }), reach({})), false, 'tools.deny dropped');
    assert.ok(covers(reach({}), reach({ allow: ['read_*'], deny: ['write_*'] })), 'narrowed');
    assert.ok(covers(reach({ allow: ['read_*', 'write_*'] }), reach({ allow: ['read_*'] })));
    assert.equal(covers(reach({ allow: ['read_*'] }), { ...base, sampling: { mode: 'allow' } }), false, 'sampling was never shown');
    assert.ok(
      covers(
        { ...base, sampling: { mode: 'allow' }, autoApprove: ['x'], tools: { allow: ['x'] } },
        { ...base, sampling: { mode: 'allow' } },
      ),
      'no tool question skipped: the reach does not matter',
    );
  });

  it('names the roots a workspace server adds to its own fence, and asks again when they grow, not when they shrink', () => {
    const rooted = (roots: string[]) => ({ ...base, roots });
    assert.deepEqual(policyGrant(one(rooted(['/', '/home']))), { autoApprove: [], trustAnnotations: false, roots: ['/', '/home'] });
    assert.deepEqual(launchSummary(one(rooted(['/'])), undefined).grant?.roots, ['/'], 'the launch consent shows them');
    assert.equal(policyGrant(one(rooted(['/']), 'user')), undefined, "a user server's roots are the person's own");
    assert.equal(covers(base, rooted(['/'])), false, 'a root added after the answer asks again');
    assert.equal(launchCovers(legacyAnswer(base), acceptedLaunch(one(rooted(['/'])))), false, 'so does an answer from before grants');
    assert.equal(covers(rooted(['/data']), rooted(['/data', '/'])), false, 'widened');
    assert.ok(covers(rooted(['/data', '/srv']), rooted(['/srv'])), 'narrowed');
  });
});

describe('launch consent: the sandbox', () => {
  const sandboxed = { ...base, sandboxEnabled: true };

  it('a workspace server whose sandbox writes beyond its roots asks; narrowing lists and a user server do not', () => {
    assert.equal(policyGrant(one(sandboxed)), undefined);
    assert.equal(policyGrant(one({ ...sandboxed, sandbox: { filesystem: { denyRead: ['.env'], denyWrite: ['.git'] } } })), undefined);
    const widened = { ...sandboxed, sandbox: { filesystem: { allowWrite: ['~', '/etc'] } } };
    assert.deepEqual(policyGrant(one(widened))?.sandbox, { allowWrite: ['/etc', '~'] });
    assert.equal(policyGrant(one(widened, 'user')), undefined);
    // Unsandboxed, the lists do nothing, so there is nothing to consent to.
    assert.equal(policyGrant(one({ ...base, sandbox: { filesystem: { allowWrite: ['~'] } } })), undefined);
  });

  it('an answer covers a narrower sandbox, not a wider one; the launch hash does not change with the sandbox', () => {
    const wide = { ...sandboxed, sandbox: { filesystem: { allowWrite: ['~/notes', '/data'] } } };
    const narrow = { ...sandboxed, sandbox: { filesystem: { allowWrite: ['/data'] } } };
    assert.ok(covers(wide, narrow));
    assert.ok(!covers(narrow, wide));
    assert.ok(covers(wide, sandboxed));
    assert.equal(acceptedLaunch(one(wide)).launch, acceptedLaunch(one(base)).launch);
  });

  it("mcpHost.sandbox.default: workspace sandboxes a workspace's servers, not the person's; its own false then asks", () => {
    const ws = withSandboxDefault(one(base), 'workspace');
    assert.ok(ws.type === 'stdio' && ws.sandboxEnabled === true);
    assert.equal(policyGrant(ws), undefined);
    const user = withSandboxDefault(one(base, 'user'), 'workspace');
    assert.ok(user.type === 'stdio' && !user.sandboxEnabled);
    const all = withSandboxDefault(one(base, 'user'), 'all');
    assert.ok(all.type === 'stdio' && all.sandboxEnabled === true);
    const http = withSandboxDefault(one({ type: 'http', url: 'https://example.com/mcp' }), 'all');
    assert.ok(!('sandboxEnabled' in http));
    // A workspace that turns its own server's sandbox off: a loosening the consent shows, and an earlier answer does not cover.
    const optOut = withSandboxDefault(one({ ...base, sandboxEnabled: false }), 'workspace');
    assert.deepEqual(policyGrant(optOut)?.sandbox, { off: true });
    assert.ok(!launchCovers(acceptedLaunch(ws), acceptedLaunch(optOut)));
    assert.ok(launchCovers(acceptedLaunch(optOut), acceptedLaunch(ws)));
    // With the default off, false is what would happen anyway.
    assert.equal(policyGrant(withSandboxDefault(one({ ...base, sandboxEnabled: false }), 'off')), undefined);
  });

  it('the settings reject what VS Code would: unknown keys in sandbox, a non-boolean sandboxEnabled', () => {
    const problem = (entry: Record<string, unknown>) => parseServerDefinitions({ s: entry }, { scope: 'user' }).diagnostics[0]?.message;
    assert.equal(
      problem({ ...base, sandboxEnabled: true, sandbox: { filesystem: { allowWrite: ['~/x'] }, network: { allowedDomains: [] } } }),
      undefined,
    );
    assert.ok(problem({ ...base, sandbox: { filesystem: { allowRead: ['~'] } } }));
    assert.ok(problem({ ...base, sandboxEnabled: 'yes' }));
  });
});

describe('launch consent: the envFile is covered by what it holds, not only by its path', () => {
  it('an answer does not cover a rewritten envFile, and the launch refuses a file changed after the answer', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-envfile-'));
    try {
      const file = path.join(dir, '.env');
      fs.writeFileSync(file, 'A=1\n');
      const def = one({ ...base, envFile: '.env', cwd: dir });
      const first = await envFileDigest(def);
      assert.ok(first !== undefined && first !== 'missing');
      fs.writeFileSync(file, 'A=1\nnpm_config_cache=/home\n');
      const second = await envFileDigest(def);
      assert.notEqual(second, first);
      assert.ok(!launchCovers(acceptedLaunch(def, first), acceptedLaunch(def, second)), 'asked again');
      assert.ok(launchCovers(acceptedLaunch(def, second), acceptedLaunch(def, second)));
      if (def.type !== 'stdio') return;
      await assert.rejects(stdioParamsFor(def, undefined, first), /envFile .* changed after you allowed it/);
      assert.equal((await stdioParamsFor(def, undefined, second)).env?.npm_config_cache, '/home');
      assert.equal(await envFileDigest(one({ ...base, envFile: 'none.env', cwd: dir })), 'missing');
      assert.equal(await envFileDigest(one({ ...base, envFile: '${input:f}', cwd: dir })), 'unresolved');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
