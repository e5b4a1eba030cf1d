import { strict as assert } from 'node:assert';
import { applyStopSequences, chooseModel, SamplingBudget, type ModelCandidate, type SamplingPolicy } from '../../src/core';

const model = (id: string, family: string, maxInputTokens = 100_000): ModelCandidate => ({ id, name: id, family, vendor: 'test', maxInputTokens });
const models = [model('claude-sonnet-x', 'claude-sonnet', 200_000), model('claude-haiku-x', 'claude-haiku', 200_000), model('gpt-big', 'gpt', 128_000), model('gpt-mini', 'gpt-mini', 128_000)];
const policy = (p: Partial<SamplingPolicy> = {}): SamplingPolicy => ({ mode: 'ask', models: [], ...p });

describe('sampling policy', () => {
  it('matches hints as name substrings, first matching hint wins', () => {
    const c = chooseModel(models, policy(), { hints: [{ name: 'nothing-like-this' }, { name: 'sonnet' }, { name: 'gpt' }] });
    assert.deepEqual(c.kind === 'chosen' && c.model.id, 'claude-sonnet-x');
  });
  it('breaks ties with the priorities', () => {
    const smart = chooseModel(models, policy(), { hints: [{ name: 'claude' }], intelligencePriority: 1 });
    assert.equal(smart.kind, 'ambiguous', 'same context size and no speed preference: the person picks');
    const quick = chooseModel(models, policy(), { hints: [{ name: 'claude' }], speedPriority: 1, costPriority: 0.8 });
    assert.ok(quick.kind === 'chosen' && quick.model.id === 'claude-haiku-x');
    const big = chooseModel(models, policy(), { hints: [{ name: 'gpt' }, { name: 'claude' }], intelligencePriority: 1 });
    assert.equal(big.kind, 'ambiguous');
  });
  it('stays within the allowlist of ids or families', () => {
    const c = chooseModel(models, policy({ models: ['gpt-mini', 'CLAUDE-HAIKU'] }), { hints: [{ name: 'sonnet' }] });
    assert.ok(
      c.kind === 'ambiguous' &&
        c.models
          .map((m) => m.id)
          .sort()
          .join() === 'claude-haiku-x,gpt-mini',
    );
    const none = chooseModel(models, policy({ models: ['nope'] }), undefined);
    assert.ok(none.kind === 'none' && /allowlist/.test(none.reason));
    assert.ok(chooseModel([], policy(), undefined).kind === 'none');
  });
  it('refuses beyond the rate and the hourly token budget', () => {
    let now = 0;
    const b = new SamplingBudget(() => now);
    const p = policy({ maxRequestsPerMinute: 2, maxTokensPerHour: 100 });
    b.recordRequest();
    b.recordRequest();
    assert.match(b.refusal(p) ?? '', /at most 2 sampling requests per minute/);
    now = 61_000;
    assert.equal(b.refusal(p), undefined, 'the minute passed');
    b.recordTokens(100);
    assert.match(b.refusal(p) ?? '', /100 of 100 tokens/);
    now += 3_600_001;
    assert.equal(b.refusal(p), undefined, 'the hour passed');
  });
  it('cuts text at the first stop sequence', () => {
    assert.deepEqual(applyStopSequences('hello END world STOP', ['STOP', 'END']), { text: 'hello ', stopped: true });
    assert.deepEqual(applyStopSequences('hello', ['x']), { text: 'hello', stopped: false });
  });
});
