import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { api, repoRoot, running, serverScript, setServers, waitFor } from './helpers';

import { SAMPLING_HISTORY_MAX_BYTES, SAMPLING_HISTORY_MAX_ENTRIES } from '../../src/core';
import type { SamplingRecord } from '../../src/vscode/sampling/history';
import { TestModels } from './testModels';

let models: TestModels;
const recorded = async () => models.requests;
const everything = (sampling?: Record<string, unknown>) => ({
  command: 'node',
  args: [serverScript('server-everything'), 'stdio'],
  ...(sampling ? { sampling } : {}),
});
/** A raw fixture server (`test/fixtures/raw-server.mjs`) playing `scenario`, allowed to sample the test model. */
const rawSampler = (...scenario: string[]) => ({
  command: 'node',
  args: [path.join(repoRoot(), 'test', 'fixtures', 'raw-server.mjs'), ...scenario],
  sampling: { mode: 'allow', models: ['test-echo'] },
});
const textOf = (r: SamplingRecord) => (r.request.messages[0]?.content as { text?: string } | undefined)?.text ?? '';
const resultText = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text ?? '').join('\n');

describe('sampling through vscode.lm in a real VS Code', function () {
  this.timeout(120_000);

  // Budgets belong to a server name and outlive restarts, so a test with limits uses its own name.
  async function samplingTool(sampling?: Record<string, unknown>, name = 'everything') {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({ [name]: everything(sampling) });
    const ev = await running(a, name);
    await waitFor(async () => {
      await ev.refresh('tools');
      return ev.tools.some((t) => t.name === 'trigger-sampling-request');
    }, 'the sampling tool');
    return { a, ev };
  }

  before(() => {
    models = new TestModels();
  });
  beforeEach(async () => {
    models.reset();
    await (await api()).host.sampling.resetAlways();
  });
  after(async () => {
    models.dispose();
    await setServers(undefined);
  });

  it('asks, then answers with the model and maps messages and limits', async () => {
    const { a, ev } = await samplingTool({ models: ['test-echo'] });
    const asked: string[] = [];
    a.ui.allowSampling = async (server, params) => {
      asked.push(`${server}:${params.maxTokens}`);
      return 'once';
    };
    const { result } = await ev.rawClient!.callTool('trigger-sampling-request', { prompt: 'Say hello', maxTokens: 77 });
    assert.deepEqual(asked, ['everything:77']);
    assert.match(resultText(result), /\[test-echo-large\] I read: .*Say hello/);
    const [req] = await recorded();
    assert.equal(req.model, 'test-echo-large');
    assert.equal(req.messages[0].role, 'user');
    assert.match(req.messages[0].text, /System instructions:\nYou are a helpful test server/);
    assert.match(req.messages[1].text, /Say hello/);
    assert.equal(req.modelOptions.max_tokens, 77);
    assert.equal(req.modelOptions.temperature, 0.7);
    const history = a.host.sampling.history[0];
    assert.equal(history.decision, 'allowed');
    assert.equal(history.model, 'test-echo-large');
    assert.ok((history.tokensIn ?? 0) > 0 && (history.tokensOut ?? 0) > 0);
  });

  it('returns a refusal to the server when the person denies', async () => {
    const { a, ev } = await samplingTool();
    a.ui.allowSampling = async () => 'deny';
    const { result } = await ev.rawClient!.callTool('trigger-sampling-request', { prompt: 'x' });
    assert.equal(result.isError, true);
    assert.match(resultText(result), /User rejected sampling request/);
    assert.deepEqual(await recorded(), [], 'no model was called');
  });

  it('mode allow skips the prompt', async () => {
    const { a, ev } = await samplingTool({ mode: 'allow', models: ['test-echo-large'] });
    a.ui.allowSampling = async () => assert.fail('must not ask');
    const ok = await ev.rawClient!.callTool('trigger-sampling-request', { prompt: 'fine' });
    assert.notEqual(ok.result.isError, true, resultText(ok.result));
  });

  it('a server whose sampling mode is deny is not told we sample, so it offers no sampling tool', async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({ denied: everything({ mode: 'deny' }) });
    const ev = await running(a, 'denied');
    assert.equal(ev.client!.clientCapabilities.sampling, undefined);
    // server-everything adds its client-dependent tools together once initialized: elicitation's shows they came.
    await waitFor(async () => {
      await ev.refresh('tools');
      return ev.tools.some((t) => t.name === 'trigger-elicitation-request');
    }, 'the client-dependent tools');
    assert.ok(!ev.tools.some((t) => t.name.startsWith('trigger-sampling-request')), ev.tools.map((t) => t.name).join(', '));
    await setServers({ asking: everything({ mode: 'ask' }) });
    const asking = await running(a, 'asking');
    // This VS Code's language model API calls tools: sampling.tools is declared too.
    assert.deepEqual(asking.client!.clientCapabilities.sampling, { tools: {} });
  });

  it('answers an includeContext other than none by ignoring it, and says so in the history', async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({ contextual: rawSampler('sample-with-context') });
    const record = await waitFor(
      () => a.host.sampling.history.find((r) => r.server === 'contextual' && r.durationMs !== undefined),
      'the sampling exchange to end',
    );
    assert.equal(record.decision, 'allowed', JSON.stringify(record));
    assert.equal(record.ignoredIncludeContext, 'allServers');
    const [req] = await recorded();
    assert.deepEqual(
      req.messages.map((m) => m.text),
      ['what do you know?'],
      'nothing was added to the messages',
    );
    const doc = await vscode.workspace.openTextDocument(await a.host.sampling.showHistory(a.docs));
    assert.match(doc.getText(), /includeContext "allServers" was ignored: no context of this or other servers was added/);
  });

  it('runs a tool loop: the model calls the offered tool, the server gets tool_use and toolUse, and its tool_result reaches the model', async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({ looper: rawSampler('sample-with-tools') });
    assert.deepEqual((await running(a, 'looper')).client!.clientCapabilities.sampling, { tools: {} });
    // The fixture's third request is plain text: what it received for the first two.
    const reqs = await waitFor(async () => (await recorded()).length >= 3 && (await recorded()), 'the tool loop and its report');
    const [first, second, report] = reqs;
    assert.deepEqual(first.tools, ['get_weather']);
    assert.equal(
      first.toolMode,
      (vscode as unknown as { LanguageModelChatToolMode: { Required: number } }).LanguageModelChatToolMode.Required,
      'toolChoice required',
    );
    assert.deepEqual(
      second.messages[1].toolCalls,
      [{ callId: 'call-1', name: 'get_weather', input: { city: 'Oslo' } }],
      'the tool_use went back to the model as its call',
    );
    assert.deepEqual(
      second.messages[2].toolResults,
      [{ callId: 'call-1', text: 'sunny in Oslo' }],
      'the tool_result went to the model as a result part',
    );
    const said = report.messages[0].text;
    assert.match(
      said,
      /srv-tools-1 stopReason=toolUse content=\[\{"type":"text","text":"\[test-echo-large\] calling get_weather"\},\{"type":"tool_use","id":"call-1","name":"get_weather","input":\{"city":"Oslo"\}\}\]/,
    );
    assert.match(
      said,
      /srv-tools-2 stopReason=endTurn content=\{"type":"text","text":"\[test-echo-large\] I read: {2}\(result of call-1: sunny in Oslo\)"\}/,
    );
    // The consent and Review describe the request as the history does: the tools offered are in it.
    const doc = await vscode.workspace.openTextDocument(await a.host.sampling.showHistory(a.docs));
    assert.match(doc.getText(), /Tools offered to the model \(required\):\n> - get_weather: The weather of a city/);
  });

  it('refuses a tool_result that answers no tool_use, before any model sees it', async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({ unanswered: rawSampler('sample-tools-unanswered') });
    const record = await waitFor(() => a.host.sampling.history.find((r) => r.server === 'unanswered'), 'the sampling request');
    assert.equal(record.decision, 'refused');
    assert.match(record.error ?? '', /Invalid sampling request: message 1: tool_result "nobody-asked" answers no tool_use/);
    assert.deepEqual(await recorded(), []);
  });

  it('sends images and audio to the model as data parts', async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({ media: rawSampler('sample-media') });
    const record = await waitFor(
      () => a.host.sampling.history.find((r) => r.server === 'media' && r.durationMs !== undefined),
      'the sampling exchange to end',
    );
    assert.equal(record.decision, 'allowed', JSON.stringify(record));
    const [req] = await recorded();
    assert.equal(req.messages[0].text, 'describe these');
    const sent = (JSON.parse(JSON.stringify(record.request)) as { messages: Array<{ content: Array<{ data?: string }> }> }).messages[0]
      .content;
    assert.deepEqual(req.messages[0].data, [
      { mimeType: 'image/png', base64: sent[1].data },
      { mimeType: 'audio/wav', base64: sent[2].data },
    ]);
    assert.match(record.response ?? '', /\(image\/png, 69 bytes; audio\/wav, 4 bytes\)/);
  });

  it('refuses past the rate limit and keeps to the allowlist', async () => {
    const { a, ev } = await samplingTool({ mode: 'allow', models: ['test-other'], maxRequestsPerMinute: 1 }, 'limited');
    const first = await ev.rawClient!.callTool('trigger-sampling-request', { prompt: 'one' });
    assert.match(resultText(first.result), /\[test-other-mini\]/, 'the allowlist picked the other model');
    const second = await ev.rawClient!.callTool('trigger-sampling-request', { prompt: 'two' });
    assert.equal(second.result.isError, true);
    assert.match(resultText(second.result), /rate limit/);
    assert.equal((await recorded()).length, 1);
    void a;
  });
  it('spends the hourly token budget, counted by the model, then refuses', async () => {
    const { a, ev } = await samplingTool({ mode: 'allow', models: ['test-echo'], maxTokensPerHour: 20 }, 'budgeted');
    const first = await ev.rawClient!.callTool('trigger-sampling-request', { prompt: 'spend some tokens please' });
    assert.notEqual(first.result.isError, true, resultText(first.result));
    const spent = a.host.sampling.history[0];
    assert.ok((spent.tokensIn ?? 0) + (spent.tokensOut ?? 0) >= 20, `the first exchange used ${spent.tokensIn}+${spent.tokensOut} tokens`);
    const second = await ev.rawClient!.callTool('trigger-sampling-request', { prompt: 'more' });
    assert.equal(second.result.isError, true);
    assert.match(resultText(second.result), /token budget spent: \d+ of 20 tokens/);
    assert.equal((await recorded()).length, 1, 'the refused request never reached a model');
  });

  /** Starts a raw server that sends `count` sampling requests at once; resolves with their records once each has ended. */
  async function burst(name: string, sampling: Record<string, unknown>, count: number, bytes?: number) {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    const entry = rawSampler('sample-burst', String(count), ...(bytes ? [String(bytes)] : []));
    await setServers({ [name]: { ...entry, sampling: { ...entry.sampling, ...sampling } } });
    const ended = (r: SamplingRecord) => r.error !== undefined || r.durationMs !== undefined;
    const last = (r: SamplingRecord) => textOf(r).startsWith(`${count - 1} `);
    // The requests arrive in order, so once the last one is in the history every one is.
    const records = await waitFor(() => {
      const mine = a.host.sampling.history.filter((r) => r.server === name);
      return mine.some(last) && mine.every(ended) && mine;
    }, `the ${count} sampling requests to end`);
    return { a, records };
  }

  it('a burst of concurrent requests cannot pass the rate limit together: the ones past it are refused', async () => {
    const { records } = await burst('burst-rate', { maxRequestsPerMinute: 2 }, 5);
    const refused = records.filter((r) => r.decision === 'refused');
    assert.equal(records.filter((r) => r.decision === 'allowed').length, 2, JSON.stringify(records.map((r) => r.decision)));
    assert.equal(refused.length, 3);
    for (const r of refused)
      assert.match(r.error ?? '', /^Sampling refused: rate limit: at most 2 sampling requests per minute \(\d under way\)$/);
    assert.equal((await recorded()).length, 2, 'only two reached the model');
  });

  it('a burst of concurrent requests cannot pass the token budget together: each holds its estimate', async () => {
    const { records } = await burst('burst-tokens', { maxTokensPerHour: 20 }, 3);
    assert.equal(records.filter((r) => r.decision === 'allowed').length, 1, JSON.stringify(records.map((r) => r.decision)));
    for (const r of records.filter((x) => x.decision === 'refused'))
      assert.match(
        r.error ?? '',
        /^Sampling refused: token budget spent: \d+ of 20 tokens in the last hour \(\d+ of them held by the 1 under way\)$/,
      );
    assert.equal((await recorded()).length, 1);
  });

  it('the sampling history keeps the last 200 exchanges of a burst, the newest first', async () => {
    const { a, records } = await burst('burst-many', { maxRequestsPerMinute: 1 }, 250);
    assert.equal(a.host.sampling.history.length, SAMPLING_HISTORY_MAX_ENTRIES);
    assert.equal(records.length, SAMPLING_HISTORY_MAX_ENTRIES);
    const texts = records.map(textOf);
    assert.ok(!texts.includes('0 one of a burst') && texts.includes('249 one of a burst'), 'the oldest went first');
  });

  it('the sampling history keeps at most 8 MB of a burst of large requests, the newest first', async () => {
    // Five requests of 1.9 MB each: under the 2 MB the history keeps of one, over 8 MB together.
    const { a, records } = await burst('burst-large', { maxRequestsPerMinute: 1 }, 5, 1_900_000);
    try {
      const kept = a.host.sampling.history.reduce(
        (sum, r) => sum + Buffer.byteLength(JSON.stringify(r.request)) + Buffer.byteLength(r.response ?? ''),
        0,
      );
      assert.ok(kept <= SAMPLING_HISTORY_MAX_BYTES, `${kept} bytes kept`);
      assert.deepEqual(
        records.map((r) => textOf(r).slice(0, 2)),
        ['4 ', '3 ', '2 ', '1 '],
        'the oldest went first',
      );
    } finally {
      // Megabytes of history would slow down every later test that opens it.
      for (const r of records) a.host.sampling.records.remove(r);
    }
  });

  it('Review sends the messages as the person edited them', async () => {
    const { a, ev } = await samplingTool({ models: ['test-echo'] });
    a.ui.allowSampling = async () => 'review';
    a.ui.reviewSampling = async (_server, params) => ({
      ...params,
      messages: [{ role: 'user', content: { type: 'text', text: 'edited by the person' } }],
    });
    const { result } = await ev.rawClient!.callTool('trigger-sampling-request', { prompt: 'original' });
    assert.match(resultText(result), /I read: edited by the person/);
    const [req] = await recorded();
    assert.ok(!req.messages.some((m) => m.text.includes('original')), 'the original text was not sent');
    a.ui.reviewSampling = async () => undefined;
    const refused = await ev.rawClient!.callTool('trigger-sampling-request', { prompt: 'closed the review' });
    assert.match(resultText(refused.result), /User rejected sampling request/);
  });

  it('a cancel from the server ends the model request mid-answer', async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    models.delayMs = 400;
    await setServers({ canceller: rawSampler('cancel-peer-request', '1200') });
    const record = await waitFor(
      () => a.host.sampling.history.find((r) => r.server === 'canceller' && r.decision !== 'refused' && r.durationMs !== undefined),
      'the sampling exchange to end',
    );
    assert.equal(record.decision, 'cancelled', JSON.stringify(record));
    const [req] = await recorded();
    assert.equal(req.model, 'test-echo-large');
    await waitFor(() => req.cancelled, 'the model to see the cancellation');
  });

  it('a stop on our side mid-answer is recorded as the connection closing, not as the server cancelling', async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    models.delayMs = 400;
    // This server would cancel only after a minute: we stop it first.
    await setServers({ stopped: rawSampler('cancel-peer-request', '60000') });
    const h = await running(a, 'stopped');
    await waitFor(async () => (await recorded()).length > 0, 'the model request to start');
    await h.stop();
    const record = await waitFor(
      () => a.host.sampling.history.find((r) => r.server === 'stopped' && r.durationMs !== undefined),
      'the sampling exchange to end',
    );
    assert.equal(record.decision, 'cancelled', JSON.stringify(record));
    assert.match(record.error ?? '', /^Connection closed/);
    assert.doesNotMatch(record.error ?? '', /by the server/);
  });
});
