// A server's secret (from its env) in the text a question shows it is redacted, not only made
// inert: in the forms, the completion picker, the tool-argument steps, the consent modals and an
// app's message. Each text is built by the function the window's question shows it with, given the
// host's redactor, which has learned the secret from the server's definition.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { forDisplay, launchSummary, orderedProperties, type ServerDefinition, type ServerHandle } from '../../src/core';
import type { ElicitationUi } from '../../src/vscode/ui/elicitationSteps';
import { formConsentText } from '../../src/vscode/elicitation/consentText';
import { appMessageText } from '../../src/vscode/apps/appPanels';
import { completionItems } from '../../src/vscode/window/completionPick';
import { launchConsentText } from '../../src/vscode/policy/consent';
import { outsideRootsQuestion } from '../../src/vscode/policy/gate';
import { samplingConsentText } from '../../src/vscode/sampling/prompts';
import { argumentTexts } from '../../src/vscode/tools/argumentInput';
import { toolConfirmationQuestion } from '../../src/vscode/tools/callTool';
import { api, repoRoot, running, setServers, waitFor } from './helpers';

/** The value of the server's API_TOKEN: a secret by its name, so the host redacts it from the start on. */
const SECRET = 'sk-redaction-5f3a9c1e77';
const fixture = {
  command: 'node',
  args: [path.join(repoRoot(), 'test', 'fixtures', 'elicitation-server.mjs')],
  env: { API_TOKEN: SECRET },
};

/** Everything `shown` holds, as one string: the secret must not be in it, and its replacement must. */
function assertRedacted(what: string, shown: unknown): void {
  const text = JSON.stringify(shown);
  assert.ok(!text.includes(SECRET), `${what} shows the secret: ${text}`);
  assert.ok(text.includes('***'), `${what} shows no redaction: ${text}`);
}

describe('a server’s secret in the questions it causes is redacted', function () {
  this.timeout(120_000);
  let server: ServerHandle;
  let redact: (text: string) => string;

  before(async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({ redacting: fixture });
    server = await running(a, 'redacting');
    redact = (text) => a.host.redact(text);
    assert.equal(redact(`token ${SECRET}`), 'token ***', 'the host learned the secret from the definition');
  });
  after(() => setServers(undefined));

  it('in a form: its field as the real input box shows it, and its consent', async () => {
    const a = await api();
    const real = a.ui.elicitation;
    const ui = Object.assign(Object.create(real) as ElicitationUi, { consent: async () => 'respond' as const });
    a.ui.elicitation = ui;
    try {
      const schema = {
        type: 'object',
        properties: { word: { type: 'string', title: `Word for ${SECRET}`, description: `Paste ${SECRET} here` } },
        required: ['word'],
      };
      const call = server.rawClient!.callTool('ask', { schema, message: `Confirm ${SECRET}` });
      const open = (ui as unknown as { open: Set<vscode.InputBox> }).open;
      const box = await waitFor(() => [...open][0], 'the form’s input box');
      assertRedacted('the input box', { title: box.title, prompt: box.prompt, placeholder: box.placeholder });
      box.hide();
      await call;
    } finally {
      a.ui.elicitation = real;
    }
    const fields = [{ name: 'word', title: `Word for ${SECRET}` }] as Parameters<typeof formConsentText>[2];
    assertRedacted(
      'the form consent',
      formConsentText('redacting', `Confirm ${SECRET}`, fields, (text, max) => forDisplay(text, redact, max)),
    );
  });

  it('in the completion picker: the server’s suggestions and the hint', () => {
    const items = completionItems('', [`suggested-${SECRET}`], { required: false, hint: `for ${SECRET}`, redact });
    assertRedacted('the suggestion', items[0].label);
    assertRedacted('the hint', items[0].detail);
  });

  it('in a tool-argument step: the schema’s title and description', () => {
    const [spec] = orderedProperties({
      type: 'object',
      properties: { key: { type: 'string', title: `Key ${SECRET}`, description: SECRET } },
    });
    const texts = argumentTexts({ title: 'redacting › tool (1/1)', spec, current: undefined, canGoBack: false }, redact);
    assertRedacted('the prompt', texts.prompt);
    assertRedacted('the placeholder', texts.placeholder);
  });

  it('in the consent modals: launch, tool confirmation, outside the roots, sampling', () => {
    const def = server.definition as ServerDefinition & { type: 'stdio' };
    assertRedacted(
      'the launch consent',
      launchConsentText(launchSummary({ ...def, args: [...def.args, `--key=${SECRET}`] }, undefined), redact),
    );
    const tool = { name: 'send', description: `sends ${SECRET}`, inputSchema: { type: 'object' as const } };
    assertRedacted('the tool confirmation', toolConfirmationQuestion('redacting', tool, { token: SECRET }, false, 'app', redact));
    assertRedacted(
      'the outside-roots question',
      outsideRootsQuestion(
        {
          server: 'redacting',
          asker: 'app',
          method: 'tools/call',
          name: 'send',
          findings: [{ pointer: '/path', value: `/outside/${SECRET}`, resolved: `/outside/${SECRET}` }],
          roots: [],
          tool: { tool, args: { path: `/outside/${SECRET}` }, annotationsTrusted: false },
        },
        redact,
      ),
    );
    assertRedacted(
      'the sampling consent',
      samplingConsentText(
        'redacting',
        { messages: [{ role: 'user', content: { type: 'text', text: `repeat ${SECRET}` } }], maxTokens: 10 },
        [],
        redact,
      ),
    );
  });

  it('in an MCP App’s message', () => {
    assertRedacted('the app message', appMessageText('redacting', 'message', `leaking ${SECRET}`, redact));
  });
});
