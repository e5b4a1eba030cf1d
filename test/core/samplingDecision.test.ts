// The decision half of sampling (src/core/sampling/decision.ts), in plain Node: what the editor
// layer then asks the person and the model is decided here.
import { strict as assert } from 'node:assert';
import {
  consentRefused,
  decideModel,
  ErrorCode,
  noModelChosen,
  planSampling,
  samplingAnswer,
  SamplingBudget,
  USER_REJECTED,
  type CreateMessageParams,
  type ModelCandidate,
  type SamplingCircumstances,
  type SamplingPolicy,
} from '../../src/core';

const policy = (p: Partial<SamplingPolicy> = {}): SamplingPolicy => ({ mode: 'ask', models: [], ...p });
const request = (p: Partial<CreateMessageParams> = {}): CreateMessageParams => ({
  messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
  maxTokens: 100,
  ...p,
});
const at = (p: Partial<SamplingCircumstances> = {}): SamplingCircumstances => ({
  canCallTools: true,
  editorVersion: '1.90.2',
  alwaysAllowed: false,
  budget: new SamplingBudget(),
  ...p,
});
const tool = { name: 'lookup', inputSchema: { type: 'object' as const } };
const model = (id: string, maxInputTokens = 100_000): ModelCandidate => ({ id, name: id, family: id, vendor: 'test', maxInputTokens });

describe('sampling decision (plain Node)', () => {
  describe('planSampling', () => {
    it('refuses a server whose mode is deny as the person would, before looking at the request', () => {
      const plan = planSampling(request({ tools: 'not an array' as never }), policy({ mode: 'deny' }), at());
      assert.deepEqual(plan, {
        kind: 'refuse',
        code: USER_REJECTED,
        message: 'User rejected sampling request: sampling is denied for this server by mcpHost.servers sampling.mode',
        denied: true,
      });
    });

    it('refuses malformed tools and tool messages as invalid params, not as the person', () => {
      for (const [tools, problem] of [
        ['x', 'tools must be an array'],
        [[{ inputSchema: {} }], 'tool 0 has no name'],
        [[{ name: 'a' }], 'tool "a" has no inputSchema object'],
      ] as const) {
        const plan = planSampling(request({ tools: tools as never }), policy(), at());
        assert.deepEqual(plan, {
          kind: 'refuse',
          code: ErrorCode.InvalidParams,
          message: `Invalid sampling request: ${problem}`,
          denied: false,
        });
      }
      const stray = planSampling(
        request({ messages: [{ role: 'user', content: { type: 'tool_result', toolUseId: 'nope', content: [] } }] }),
        policy(),
        at(),
      );
      assert.equal(stray.kind === 'refuse' && stray.code, ErrorCode.InvalidParams, JSON.stringify(stray));
    });

    it('refuses tools an editor cannot call, naming its version', () => {
      const plan = planSampling(request({ tools: [tool] }), policy(), at({ canCallTools: false, editorVersion: '1.90.2' }));
      assert.ok(
        plan.kind === 'refuse' && plan.code === ErrorCode.InvalidParams && plan.message.includes('(1.90.2) cannot call tools'),
        JSON.stringify(plan),
      );
      assert.equal(planSampling(request({ tools: [tool] }), policy(), at({ canCallTools: true })).kind, 'proceed');
      assert.equal(
        planSampling(request({ tools: [tool], toolChoice: { mode: 'none' } }), policy(), at({ canCallTools: false })).kind,
        'proceed',
        'tools listed with toolChoice none are not used',
      );
    });

    it('refuses beyond the budget, and only then; a plan holds its place in the budget', () => {
      let now = 0;
      const budget = new SamplingBudget(() => now);
      const limited = policy({ maxRequestsPerMinute: 1, maxTokensPerHour: 50 });
      const first = planSampling(request(), limited, at({ budget }));
      assert.equal(first.kind, 'proceed');
      const rate = planSampling(request(), limited, at({ budget }));
      assert.ok(
        rate.kind === 'refuse' &&
          rate.code === ErrorCode.InternalError &&
          rate.message === 'Sampling refused: rate limit: at most 1 sampling requests per minute (1 under way)',
        JSON.stringify(rate),
      );
      if (first.kind === 'proceed') first.reservation.commit(50);
      now = 61_000;
      const tokens = planSampling(request(), limited, at({ budget }));
      assert.ok(
        tokens.kind === 'refuse' && tokens.message === 'Sampling refused: token budget spent: 50 of 50 tokens in the last hour',
        JSON.stringify(tokens),
      );
    });

    it('holds the capped maxTokens and the messages as the estimate', () => {
      const budget = new SamplingBudget(() => 0);
      const hourly = policy({ maxTokensPerHour: 214, maxTokensPerRequest: 200 });
      assert.equal(planSampling(request({ maxTokens: 5000 }), hourly, at({ budget })).kind, 'proceed');
      const second = planSampling(request(), hourly, at({ budget }));
      // 200 (the capped maxTokens) and a quarter of the 55 characters of its messages as JSON.
      assert.ok(
        second.kind === 'refuse' &&
          second.message.includes('token budget spent: 214 of 214 tokens in the last hour (214 of them held by the 1 under way)'),
        JSON.stringify(second),
      );
    });

    it('caps maxTokens to the policy and ignores includeContext, saying so, without changing the server’s request', () => {
      const params = request({ maxTokens: 5000, includeContext: 'allServers' });
      const plan = planSampling(params, policy({ maxTokensPerRequest: 200 }), at());
      assert.ok(plan.kind === 'proceed');
      assert.equal(plan.request.maxTokens, 200);
      assert.equal(params.maxTokens, 5000);
      assert.equal(plan.ignoredIncludeContext, 'allServers');
      assert.deepEqual(plan.notes, [
        'includeContext "allServers" treated as "none": other servers\' context is not shared',
        'maxTokens 5000 capped to 200',
      ]);
      const plain = planSampling(request({ maxTokens: 100, includeContext: 'none' }), policy({ maxTokensPerRequest: 200 }), at());
      assert.ok(
        plain.kind === 'proceed' && plain.request.maxTokens === 100 && plain.notes.length === 0 && !('ignoredIncludeContext' in plain),
      );
    });

    it('asks the person only in ask mode for a server not always allowed', () => {
      const ask = (mode: SamplingPolicy['mode'], alwaysAllowed: boolean) => {
        const plan = planSampling(request(), policy({ mode }), at({ alwaysAllowed }));
        return plan.kind === 'proceed' && plan.ask;
      };
      assert.equal(ask('ask', false), true);
      assert.equal(ask('ask', true), false);
      assert.equal(ask('allow', false), false);
    });
  });

  describe('decideModel', () => {
    it('refuses with the reason when no model is allowed or available', () => {
      const none = decideModel([model('gpt-x')], policy({ models: ['claude'] }), undefined);
      assert.ok(
        none.kind === 'none' &&
          none.refusal.code === ErrorCode.InternalError &&
          none.refusal.message === `No language model available: ${none.reason}`,
        JSON.stringify(none),
      );
      assert.match(none.kind === 'none' ? none.reason : '', /allowlist/);
      const empty = decideModel([], policy(), undefined);
      assert.ok(empty.kind === 'none' && empty.reason === 'no language model is available');
    });

    it('lets the person break a tie in ask mode, and takes the first one otherwise', () => {
      const tie = [model('a'), model('b')];
      assert.deepEqual(decideModel(tie, policy({ mode: 'ask' }), undefined), { kind: 'pick', models: tie });
      assert.deepEqual(decideModel(tie, policy({ mode: 'allow' }), undefined), { kind: 'use', model: tie[0] });
      assert.deepEqual(decideModel(tie, policy(), { hints: [{ name: 'b' }] }), { kind: 'use', model: tie[1] });
    });
  });

  it('names the person’s refusals with the spec’s user-rejected code', () => {
    assert.deepEqual(consentRefused(), { kind: 'refuse', code: USER_REJECTED, message: 'User rejected sampling request', denied: true });
    assert.deepEqual(noModelChosen(), {
      kind: 'refuse',
      code: USER_REJECTED,
      message: 'User rejected sampling request: no model was chosen',
      denied: true,
    });
  });

  describe('samplingAnswer', () => {
    it('keeps the share of text that fits when the model overshot maxTokens', () => {
      const a = samplingAnswer({ text: 'abcdefghij', stopped: false, uses: [], tokensOut: 20 }, 10, 'm');
      assert.deepEqual(a, {
        result: { role: 'assistant', content: { type: 'text', text: 'abcde' }, model: 'm', stopReason: 'maxTokens' },
        text: 'abcde',
        tokensOut: 10,
      });
    });

    it('says endTurn or stopSequence for text within the limit', () => {
      assert.equal(samplingAnswer({ text: 'ok', stopped: false, uses: [], tokensOut: 1 }, 10, 'm').result.stopReason, 'endTurn');
      assert.equal(samplingAnswer({ text: 'ok', stopped: true, uses: [], tokensOut: 1 }, 10, 'm').result.stopReason, 'stopSequence');
      assert.deepEqual(samplingAnswer({ text: '', stopped: false, uses: [], tokensOut: 0 }, 10, 'm').result.content, {
        type: 'text',
        text: '',
      });
    });

    it('ends the turn with toolUse, text first, and never cuts a tool call', () => {
      const use = { type: 'tool_use' as const, id: 'c1', name: 'lookup', input: { q: 'x' } };
      const both = samplingAnswer({ text: 'let me look', stopped: false, uses: [use], tokensOut: 50 }, 10, 'm');
      assert.deepEqual(both.result, {
        role: 'assistant',
        content: [{ type: 'text', text: 'let me look' }, use],
        model: 'm',
        stopReason: 'toolUse',
      });
      assert.equal(both.tokensOut, 50);
      assert.deepEqual(samplingAnswer({ text: '', stopped: false, uses: [use], tokensOut: 5 }, 10, 'm').result.content, use);
    });
  });
});
