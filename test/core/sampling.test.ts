import { strict as assert } from 'node:assert';
import {
  applyStopSequences,
  chooseModel,
  SamplingBudget,
  SamplingHistory,
  type CreateMessageParams,
  type ModelCandidate,
  type SamplingPolicy,
} from '../../src/core';

const model = (id: string, family: string, maxInputTokens = 100_000): ModelCandidate => ({
  id,
  name: id,
  family,
  vendor: 'test',
  maxInputTokens,
});
const models = [
  model('claude-sonnet-x', 'claude-sonnet', 200_000),
  model('claude-haiku-x', 'claude-haiku', 200_000),
  model('gpt-big', 'gpt', 128_000),
  model('gpt-mini', 'gpt-mini', 128_000),
];
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
    const answered = (tokens: number) => {
      const r = b.reserve(p, 1);
      assert.equal(r.kind, 'reserved', JSON.stringify(r));
      if (r.kind === 'reserved') r.commit(tokens);
    };
    /** A check alone: whether a request could go now. */
    const check = () => {
      const r = b.reserve(p, 1);
      if (r.kind === 'reserved') r.release();
      return r;
    };
    answered(0);
    answered(0);
    const rate = check();
    assert.match(rate.kind === 'over' ? rate.reason : '', /^rate limit: at most 2 sampling requests per minute$/);
    now = 61_000;
    assert.equal(check().kind, 'reserved', 'the minute passed');
    answered(100);
    const spent = check();
    assert.match(spent.kind === 'over' ? spent.reason : '', /^token budget spent: 100 of 100 tokens in the last hour$/);
    now += 3_600_001;
    assert.equal(check().kind, 'reserved', 'the hour passed');
  });
  it('counts requests under way: concurrent reservations cannot all pass one check; a release gives the place back', () => {
    const b = new SamplingBudget(() => 0);
    const rate = policy({ maxRequestsPerMinute: 2 });
    const taken = [1, 2, 3, 4].map(() => b.reserve(rate, 10));
    assert.deepEqual(
      taken.map((r) => r.kind),
      ['reserved', 'reserved', 'over', 'over'],
    );
    assert.match(taken[2].kind === 'over' ? taken[2].reason : '', /at most 2 sampling requests per minute \(2 under way\)/);
    if (taken[0].kind === 'reserved') taken[0].release();
    const again = b.reserve(rate, 10);
    assert.equal(again.kind, 'reserved', 'a refused request gave its place back');
    if (again.kind === 'reserved') {
      again.commit(5);
      again.release();
    }
    assert.equal(b.reserve(rate, 10).kind, 'over', 'a release after commit changes nothing');

    const tokens = new SamplingBudget(() => 0);
    const hourly = policy({ maxTokensPerHour: 100 });
    const held = [1, 2, 3].map(() => tokens.reserve(hourly, 60));
    assert.deepEqual(
      held.map((r) => r.kind),
      ['reserved', 'reserved', 'over'],
      'the second may overshoot, as a lone request may; the third sees 120 held',
    );
    assert.match(
      held[2].kind === 'over' ? held[2].reason : '',
      /token budget spent: 120 of 100 tokens in the last hour \(120 of them held by the 2 under way\)/,
    );
  });
  it('cuts text at the first stop sequence', () => {
    assert.deepEqual(applyStopSequences('hello END world STOP', ['STOP', 'END']), { text: 'hello ', stopped: true });
    assert.deepEqual(applyStopSequences('hello', ['x']), { text: 'hello', stopped: false });
  });
});

describe('sampling history bounds', () => {
  type Entry = { request: CreateMessageParams; response?: string; omittedRequestBytes?: number; n: number };
  const entry = (n: number, text = 'hi'): Entry => ({
    n,
    request: { messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens: 10 },
  });

  it('keeps the newest entries within the count and the bytes, and a too large request only by its size', () => {
    const history = new SamplingHistory<Entry>({ maxEntries: 3, maxBytes: 1_000, maxRequestBytes: 400 });
    for (let n = 0; n < 5; n++) history.add(entry(n));
    assert.deepEqual(
      history.items.map((e) => e.n),
      [4, 3, 2],
    );
    const large = entry(5, 'é'.repeat(150));
    history.add(large);
    assert.equal(large.omittedRequestBytes, undefined, '300 two-byte characters fit in 400 bytes');
    const answered = history.items[1];
    answered.response = 'ü'.repeat(260);
    history.changed(answered);
    assert.ok(history.keptBytes <= 1_000, `${history.keptBytes} bytes`);
    assert.deepEqual(
      history.items.map((e) => e.n),
      [5, 4],
      'the answer counted: the oldest went',
    );
    const huge = entry(6, 'x'.repeat(500));
    history.add(huge);
    assert.ok(huge.omittedRequestBytes! > 500 && huge.request.messages.length === 0 && huge.request.maxTokens === 10, JSON.stringify(huge));
    history.remove(huge);
    assert.deepEqual(
      history.items.map((e) => e.n),
      [5],
      'its stand-in counted too (4 went), and it is removed',
    );
    assert.equal(history.keptBytes, Buffer.byteLength(JSON.stringify(large.request)));
  });
});
