import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { ElicitationUi, FieldAnswer, FieldStep } from '../../src/vscode/ui/elicitationSteps';
import { api, running, setServers, v2ServerEntry as v2 } from './helpers';
import { TestModels } from './testModels';

const resultText = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text ?? '').join('\n');

describe('a 2026-07-28 server in a real VS Code: its questions arrive inside results', function () {
  this.timeout(120_000);
  let models: TestModels;
  let realElicitation: ElicitationUi;

  /** The real form UI with the person answering: Respond, "Ada" for a name, yes for anything else, then Send; each field asked is recorded in `asked`. */
  function answeringForms(asked: FieldStep[]): ElicitationUi {
    return Object.assign(Object.create(realElicitation) as ElicitationUi, {
      consent: async () => 'respond' as const,
      askField: async (step: FieldStep): Promise<FieldAnswer> => {
        asked.push(step);
        return { value: step.field.name === 'name' ? 'Ada' : true };
      },
      review: async () => 'send' as const,
    });
  }

  before(async () => {
    models = new TestModels();
    const a = await api();
    realElicitation = a.ui.elicitation;
    a.ui.allowLaunch = async () => 'allow';
    await a.host.sampling.resetAlways();
  });
  after(async () => {
    (await api()).ui.elicitation = realElicitation;
    models.dispose();
    await setServers(undefined);
  });

  it('answers elicitation, sampling and roots of one tools/call with the same consent, policy and history as a 2025-11-25 server', async () => {
    const a = await api();
    const samplingAsked: string[] = [];
    a.ui.allowSampling = async (server, params) => {
      samplingAsked.push(`${server}: ${JSON.stringify(params.messages[0].content)}`);
      return 'once';
    };
    const fields: FieldStep[] = [];
    a.ui.elicitation = answeringForms(fields);
    await setServers({ modern: v2({ sampling: { models: ['test-echo'] } }) });
    const h = await running(a, 'modern');
    assert.equal(h.client?.era, 'modern');
    const elicitationsBefore = a.host.elicitation.history.length;

    const { result } = await h.rawClient!.callTool('interview', {});
    const text = resultText(result);
    const folder = vscode.workspace.workspaceFolders![0].uri.toString();
    assert.match(text, /^name=Ada poem=\[test-echo-large\] I read: .*A poem, please.* roots=\S+ confirm=accept$/s);
    assert.ok(text.includes(`roots=${folder}`), `the workspace folder is the root: ${text}`);
    // The same consent as a server request of 2025-11-25, and the same records.
    assert.deepEqual(samplingAsked, ['modern: {"type":"text","text":"A poem, please"}']);
    assert.deepEqual(
      fields.map((f) => f.field.name),
      ['name', 'sure'],
    );
    assert.equal(a.host.sampling.history[0].server, 'modern');
    assert.equal(a.host.sampling.history[0].decision, 'allowed');
    assert.equal(a.host.sampling.history[0].model, 'test-echo-large');
    const elicitations = a.host.elicitation.history.slice(0, a.host.elicitation.history.length - elicitationsBefore);
    assert.deepEqual(
      elicitations.map((r) => `${r.server} ${r.outcome}`),
      ['modern accept', 'modern accept'],
    );
  });

  it('keeps the sampling policy: to a server set to deny no sampling is declared, so the server refuses the call and no model is asked', async () => {
    const a = await api();
    a.ui.allowSampling = async () => assert.fail('a denied server is not asked about');
    a.ui.elicitation = answeringForms([]);
    await setServers({ refused: v2({ sampling: { mode: 'deny' } }) });
    const h = await running(a, 'refused');
    const before = models.requests.length;
    // We declared no sampling to this server, so it refuses the call (-32021) instead of asking.
    await assert.rejects(h.rawClient!.callTool('interview', {}), (e: { code?: number }) => e.code === -32021);
    assert.equal(models.requests.length, before, 'no model was asked');
  });
});
