import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { FormField } from '../../src/core';
import type { ElicitationUi, FieldAnswer, FieldStep, ReviewAnswer, ReviewStep } from '../../src/vscode/ui/elicitationSteps';
import { api, repoRoot, running, serverScript, setServers, waitFor } from './helpers';

const fixture = () => ({ command: 'node', args: [path.join(repoRoot(), 'test', 'fixtures', 'elicitation-server.mjs')] });
const resultText = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text ?? '').join('\n');

describe('elicitation in a real VS Code', function () {
  this.timeout(120_000);
  let real: ElicitationUi;

  /** The real UI with some questions answered by the test. */
  async function withUi(overrides: Partial<ElicitationUi>) {
    const a = await api();
    real ??= a.ui.elicitation;
    a.ui.elicitation = Object.assign(Object.create(real) as ElicitationUi, { consent: async () => 'respond' as const }, overrides);
    return a;
  }
  async function server(name: string, def: Record<string, unknown>, tool: string) {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({ [name]: def });
    const h = await running(a, name);
    await waitFor(async () => {
      await h.refresh('tools');
      return h.tools.some((t) => t.name === tool);
    }, `the ${tool} tool`);
    return h;
  }

  afterEach(async () => {
    if (real) (await api()).ui.elicitation = real;
  });
  after(() => setServers(undefined));

  it('asks every field kind of server-everything with its default, and sends what the person changed in the review', async () => {
    const asked: FieldStep[] = [];
    const reviews: ReviewStep[] = [];
    await withUi({
      askField: async (step): Promise<FieldAnswer> => {
        asked.push(step);
        const f = step.field;
        if (f.name === 'name') return { value: step.current === undefined ? 'Ada' : 'Ada Lovelace' };
        if (f.name === 'check') return { value: true };
        if (f.name === 'email') return { value: 'ada@example.com' };
        return step.current === undefined ? 'skip' : { value: step.current as string };
      },
      review: async (step): Promise<ReviewAnswer> => {
        reviews.push({ ...step, content: { ...step.content } });
        return reviews.length === 1 ? { edit: step.fields.findIndex((f) => f.name === 'name') } : 'send';
      },
    });
    const ev = await server(
      'everything',
      { command: 'node', args: [serverScript('server-everything'), 'stdio'] },
      'trigger-elicitation-request',
    );
    const { result } = await ev.rawClient!.callTool('trigger-elicitation-request', {});
    const text = resultText(result);
    assert.match(text, /- Name: Ada Lovelace/, 'the value edited in the review was sent');
    assert.match(text, /- Favorite Integer: 42/, 'a default was pre-filled and kept');
    const kinds = Object.fromEntries(asked.map((s) => [s.field.name, s.field.kind]));
    assert.equal(kinds.untitledMultipleSelectEnum, 'multi');
    assert.equal(kinds.titledMultipleSelectEnum, 'multi');
    assert.equal(kinds.check, 'boolean');
    assert.equal(kinds.integer, 'integer');
    const labels = (name: string) =>
      (asked.find((s) => s.field.name === name)!.field as FormField & { choices: Array<{ label: string }> }).choices.map((c) => c.label);
    assert.deepEqual(labels('legacyTitledEnum'), ['Cats', 'Dogs', 'Birds', 'Fish', 'Reptiles']);
    assert.deepEqual(labels('titledSingleSelectEnum'), ['Superman', 'Green Lantern', 'Wonder Woman']);
    assert.deepEqual(labels('titledMultipleSelectEnum'), ['Tuna', 'Salmon', 'Trout']);
    assert.deepEqual(
      asked.find((s) => s.field.name === 'untitledMultipleSelectEnum')!.current,
      ['Guitar'],
      'the multi-select default starts picked',
    );
    assert.equal(reviews[0].content.name, 'Ada', 'the review lists every answer before anything is sent');
    assert.equal(reviews[0].content.legacyTitledEnum, 'pet-1');
    assert.equal(asked.at(-1)!.field.name, 'name', 'Edit went back to the field');
    assert.equal(asked.at(-1)!.current, 'Ada', 'with its answer filled in');
    const raw = JSON.parse(text.slice(text.indexOf('Raw result:') + 'Raw result:'.length));
    assert.deepEqual(raw.content.titledMultipleSelectEnum, ['fish-1']);
    assert.equal((await api()).host.elicitation.history[0].outcome, 'accept');
  });

  it('sends nothing that fails requestedSchema: Send waits until the answer fits', async () => {
    const reviews: ReviewStep[] = [];
    await withUi({
      askField: async () => ({ value: reviews.length === 0 ? 'ab' : 'abc' }),
      review: async (step) => {
        reviews.push(step);
        return reviews.length === 1 ? 'send' : reviews.length === 2 ? { edit: 0 } : 'send';
      },
    });
    const h = await server('forms', fixture(), 'ask');
    const schema = { type: 'object', properties: { word: { type: 'string', minLength: 3 } }, required: ['word'] };
    const { result } = await h.rawClient!.callTool('ask', { schema });
    assert.deepEqual(JSON.parse(resultText(result)), { action: 'accept', content: { word: 'abc' } });
    assert.match(reviews[0].problem ?? '', /word/, 'the review said why it could not send');
    assert.equal(reviews[1].problem, reviews[0].problem, 'a Send with a problem was not sent');
    assert.equal(reviews[2].problem, undefined);
  });

  it('closes the open quick pick when the server cancels the form', async () => {
    const a = await withUi({});
    const ui = real as unknown as { open: Set<unknown> };
    const h = await server('forms', fixture(), 'ask-then-cancel');
    const call = h.rawClient!.callTool('ask-then-cancel', { afterMs: 2000 });
    await waitFor(() => ui.open.size === 1, 'the first field to be asked');
    const { result } = await call;
    assert.equal(resultText(result), 'the server cancelled its form');
    await waitFor(
      () => a.host.elicitation.history.find((r) => r.server === 'forms' && r.outcome === 'withdrawn'),
      'the form to end as withdrawn',
    );
    assert.equal(ui.open.size, 0, 'the quick input was closed');
  });

  it('URL mode: a page the server reports done while the consent still shows ends the consent', async () => {
    let asked = 0;
    const a = await withUi({
      openPage: (_server, _url, _message, signal) => {
        asked++;
        return new Promise((resolve) => signal.addEventListener('abort', () => resolve(undefined)));
      },
    });
    const h = await server('forms', fixture(), 'ask-url');
    const { result } = await h.rawClient!.callTool('ask-url', { completeAfterMs: 300 });
    assert.deepEqual(JSON.parse(resultText(result)), { action: 'cancel' });
    assert.equal(asked, 1);
    assert.equal(a.host.elicitation.history[0].outcome, 'withdrawn');
  });

  it('-32042 from prompts/get and tools/call: consent, then the request runs again once the server reports the page complete', async () => {
    const pages: string[] = [];
    let manualRetries = 0;
    let neverCompletes = false;
    await withUi({
      openPage: async (_server, url) => (pages.push(url.toString()), 'open'),
      // The real progress notification, closed by the completion, except where the server never sends one.
      waitForPages: (server, what, allCompleted, signal) =>
        neverCompletes ? (manualRetries++, Promise.resolve('retry' as const)) : real.waitForPages(server, what, allCompleted, signal),
    });
    const h = await server('forms', fixture(), 'needs-page');
    const prompt = await h.rawClient!.getPrompt('gated', { key: 'p1' });
    assert.equal((prompt.messages[0].content as { text: string }).text, 'the gated prompt');
    const { result } = await h.rawClient!.callTool('needs-page', { key: 't1' });
    assert.equal(resultText(result), 'done after the page');
    assert.equal(pages.length, 2);
    assert.match(pages[0], /^https:\/\/example\.test\/finish\//);
    assert.equal(manualRetries, 0);
    neverCompletes = true;
    const manual = await h.rawClient!.callTool('needs-page', { key: 't2', completeAfterMs: -1 });
    assert.equal(resultText(manual.result), 'done after the page', 'Retry is the fallback when no completion comes');
    assert.equal(manualRetries, 1);
  });
});
