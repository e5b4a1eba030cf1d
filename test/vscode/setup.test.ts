import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { neutraliseLinks } from '../../src/core';
import type { HostUi } from '../../src/vscode/ui/hostUi';
import { windowUi, type SetupStep, type SetupUi } from '../../src/vscode/ui/setupUi';
import { env } from './harnessEnv';
import { api, running, serverScript, setServers, waitFor } from './helpers';

type Answer = (items: readonly vscode.QuickPickItem[], options: vscode.QuickPickOptions & vscode.InputBoxOptions) => unknown;

/**
 * Answers each step of a guided flow the way a person would, and fails on a step the test did
 * not expect. An input answer is checked with the flow's own validateInput first.
 */
function scriptedUi(answers: Partial<Record<SetupStep, Answer>>, file?: vscode.Uri) {
  const asked: SetupStep[] = [];
  const notices: Array<{ kind: string; message: string }> = [];
  const answer = (step: SetupStep, items: readonly vscode.QuickPickItem[], options: object) => {
    asked.push(step);
    const a = answers[step];
    if (!a) throw new Error(`the flow asked "${step}", which this test does not answer`);
    return a(items, options as vscode.QuickPickOptions & vscode.InputBoxOptions);
  };
  const ui: SetupUi = {
    pick: async (step, items, options) => answer(step, items, options) as never,
    pickMany: async (step, items, options) => answer(step, items, options) as never,
    input: async (step, options) => {
      const value = answer(step, [], options) as string | undefined;
      if (value !== undefined)
        assert.equal(await options.validateInput?.(value), undefined, `"${value}" should be accepted at step ${step}`);
      return value;
    },
    openJsonFile: async () => file,
    notify: async (kind, message) => {
      notices.push({ kind, message });
      return undefined;
    },
    confirm: async (message, _detail, action) => answer('confirm', [{ label: action }], { placeHolder: message }) === true,
  };
  return { ui, asked, notices };
}

const byLabel = (pattern: RegExp) => (items: readonly vscode.QuickPickItem[]) => {
  const item = items.find((i) => pattern.test(i.label));
  assert.ok(item, `no item matches ${pattern}: ${items.map((i) => i.label).join(', ')}`);
  return item;
};
/** The flows validate synchronously, so a refusal is checked (and fails the test) right here. */
const rejects = (options: vscode.InputBoxOptions, value: string) =>
  assert.equal(typeof options.validateInput?.(value), 'string', `"${value}" should be refused`);
/** A loopback port nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
const scope = () => vscode.workspace.getConfiguration('mcpHost').inspect<Record<string, Record<string, unknown>>>('servers');
const everythingLine = () => `node ${JSON.stringify(serverScript('server-everything'))} stdio`;

describe('Add Server and Import Servers in a real VS Code', function () {
  this.timeout(120_000);
  const mcpJson = () => path.join(vscode.workspace.workspaceFolders![0].uri.fsPath, '.vscode', 'mcp.json');

  let inputPrompt: HostUi['askInput'];
  before(async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    inputPrompt = a.ui.askInput;
  });
  after(async () => {
    const a = await api();
    a.ui.setup = windowUi;
    a.ui.askInput = inputPrompt;
    fs.rmSync(mcpJson(), { force: true });
    await setServers(undefined);
    await setServers(undefined, vscode.ConfigurationTarget.Workspace);
    await vscode.workspace.getConfiguration('mcpHost').update('inputs', undefined, vscode.ConfigurationTarget.Workspace);
  });

  it('adds a stdio server to the user settings and starts it', async () => {
    const a = await api();
    await setServers({ taken: { command: 'node', args: ['never-started.js'], autostart: false } });
    const script = scriptedUi({
      kind: byLabel(/Command \(stdio\)/),
      target: (_items, options) => {
        rejects(options, 'node "unterminated');
        return everythingLine();
      },
      name: (_items, options) => {
        rejects(options, 'taken');
        rejects(options, 'a/b');
        assert.equal(options.value, 'everything', 'the name is suggested from the package folder, not the generic index.js');
        return 'added-stdio';
      },
      scope: byLabel(/User settings/),
    });
    a.ui.setup = script.ui;
    assert.equal(await a.setup.addServer(), 'added-stdio');
    assert.deepEqual(script.asked, ['kind', 'target', 'name', 'scope']);
    assert.deepEqual(scope()?.globalValue?.['added-stdio'], { command: 'node', args: [serverScript('server-everything'), 'stdio'] });
    assert.ok(scope()?.globalValue?.taken, 'the other user server is kept');
    const server = await running(a, 'added-stdio');
    assert.ok(server.tools.some((t) => t.name === 'echo'));
    assert.deepEqual(script.notices, [{ kind: 'info', message: 'MCP Host: "added-stdio" was added to user settings and is running.' }]);
  });

  it('adds an npm package to the workspace settings as npx -y, and says when starting is not allowed', async () => {
    const a = await api();
    const asked: string[] = [];
    a.ui.allowLaunch = async ({ def }) => {
      asked.push(def.name);
      return 'cancel';
    };
    try {
      const script = scriptedUi({
        kind: byLabel(/npm Package/),
        target: (_items, options) => {
          rejects(options, 'Not A Package!');
          return '@modelcontextprotocol/server-everything@2026.8.31 stdio';
        },
        name: (_items, options) => {
          assert.equal(options.value, 'everything');
          return 'from-npm';
        },
        scope: byLabel(/Workspace settings/),
      });
      a.ui.setup = script.ui;
      assert.equal(await a.setup.addServer(), 'from-npm');
      assert.deepEqual(scope()?.workspaceValue?.['from-npm'], {
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-everything@2026.8.31', 'stdio'],
      });
      assert.deepEqual(asked, ['from-npm'], 'a workspace server asks before it starts');
      assert.equal(a.host.registry.get('from-npm')?.state.kind, 'error');
      assert.equal(script.notices.length, 1);
      assert.equal(script.notices[0].kind, 'error');
      assert.match(script.notices[0].message, /"from-npm" was added to workspace settings but could not start: .*not allowed/);
    } finally {
      a.ui.allowLaunch = async () => 'allow';
    }
  });

  it('adds an HTTP server by URL and reports that nothing answers there', async () => {
    const a = await api();
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const script = scriptedUi({
      kind: byLabel(/HTTP URL/),
      target: (_items, options) => {
        rejects(options, 'ftp://example.com/mcp');
        rejects(options, 'https://');
        return url;
      },
      name: (_items, options) => {
        assert.equal(options.value, 'local');
        return 'remote';
      },
      scope: byLabel(/User settings/),
    });
    a.ui.setup = script.ui;
    assert.equal(await a.setup.addServer(), 'remote');
    assert.deepEqual(scope()?.globalValue?.remote, { type: 'http', url });
    assert.equal(script.notices[0]?.kind, 'error');
    assert.ok(
      script.notices[0].message.startsWith('MCP Host: "remote" was added to user settings but could not start: '),
      script.notices[0].message,
    );
    // Server text in a notification has its schemes broken (a zero-width space before the colon).
    assert.ok(script.notices[0].message.includes(neutraliseLinks(url)), script.notices[0].message);
  });

  it("imports from the workspace's .vscode/mcp.json: inputs become ${input:} secrets, dropped fields are reported, the server starts", async () => {
    const a = await api();
    await setServers(undefined);
    await setServers(undefined, vscode.ConfigurationTarget.Workspace);
    fs.mkdirSync(path.dirname(mcpJson()), { recursive: true });
    fs.writeFileSync(
      mcpJson(),
      `{
        // as VS Code writes it
        "inputs": [{ "type": "promptString", "id": "import-test-token", "description": "Token for the test", "password": true }],
        "servers": {
          "imported": { "type": "stdio", "command": "node", "args": [${JSON.stringify(serverScript('server-everything'))}, "stdio"], "env": { "TOKEN": "\${input:import-test-token}" }, "dev": { "watch": "**/*.js" } },
          "broken": { "type": "stdio", "args": ["no command"] },
        },
      }`,
    );
    const inputs: unknown[] = [];
    a.ui.askInput = async (id, definition) => {
      inputs.push({ id, definition });
      return 'typed-secret';
    };
    let offered: readonly vscode.QuickPickItem[] = [];
    const script = scriptedUi({
      source: byLabel(/\.vscode\/mcp\.json$/),
      servers: (items) => {
        offered = items;
        return items; // picks the invalid one too: it must be reported, not written
      },
      scope: (items) => {
        assert.match(items[0].label, /Workspace settings/, 'a workspace file suggests workspace settings first');
        return items[0];
      },
    });
    a.ui.setup = script.ui;
    const report = await a.setup.importServers();
    assert.ok(report);
    assert.deepEqual(script.asked, ['source', 'servers', 'scope']);
    assert.deepEqual(
      offered.map((i) => [i.label, i.description, i.picked]),
      [
        ['imported', `${vscode.workspace.workspaceFolders![0].name}/.vscode/mcp.json`, true],
        ['$(error) broken', `${vscode.workspace.workspaceFolders![0].name}/.vscode/mcp.json`, false],
      ],
    );
    // Picker rows are shown text: a zero-width space breaks the "input:" scheme.
    assert.match(offered[0].detail!, /drops "dev" · asks for \$\{input\u200b?:import-test-token\}/);

    assert.deepEqual(report.imported, ['imported']);
    assert.deepEqual(scope()?.workspaceValue, {
      imported: {
        type: 'stdio',
        command: 'node',
        args: [serverScript('server-everything'), 'stdio'],
        env: { TOKEN: '${input:import-test-token}' },
      },
    });
    assert.ok(
      report.lines.some((l) => /imported \(.*\): the field "dev" is not imported/.test(l)),
      report.lines.join('\n'),
    );
    assert.ok(
      report.lines.some((l) => /\$\{input:import-test-token\} \("Token for the test"\) is asked for when the server first starts/.test(l)),
    );
    assert.ok(report.lines.some((l) => /"broken" from .* is not imported: .*command/.test(l)));
    assert.equal(script.notices[0]?.kind, 'warning');

    const inputSetting = vscode.workspace.getConfiguration('mcpHost').inspect('inputs');
    assert.deepEqual(inputSetting?.workspaceValue, { 'import-test-token': { description: 'Token for the test', password: true } });
    await running(a, 'imported');
    assert.deepEqual(
      inputs,
      [{ id: 'import-test-token', definition: { description: 'Token for the test', password: true } }],
      'asked once, as the mcp.json input describes it',
    );
  });

  it('imports a chosen mcpServers file, renaming a taken name', async () => {
    const a = await api();
    const file = path.join(env.out, 'claude_desktop_config.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          imported: { command: 'node', args: [serverScript('server-everything'), 'stdio'], timeout: 30 },
          quiet: { command: 'node', args: [serverScript('server-everything'), 'stdio'], disabled: true },
        },
      }),
    );
    const script = scriptedUi(
      {
        source: byLabel(/Choose a JSON File/),
        servers: (items) => items,
        collision: (items, options) => {
          assert.match(options.placeHolder!, /taken: imported/);
          return byLabel(/^Rename$/)(items);
        },
        scope: byLabel(/User settings/),
      },
      vscode.Uri.file(file),
    );
    a.ui.setup = script.ui;
    const report = await a.setup.importServers();
    assert.deepEqual(script.asked, ['source', 'servers', 'collision', 'scope']);
    assert.deepEqual(report?.imported, ['imported-2', 'quiet']);
    assert.deepEqual(scope()?.globalValue, {
      'imported-2': { command: 'node', args: [serverScript('server-everything'), 'stdio'] },
      quiet: { command: 'node', args: [serverScript('server-everything'), 'stdio'], enabled: false },
    });
    assert.ok(report!.lines.some((l) => /"imported" from .* is imported as "imported-2": the name was taken/.test(l)));
    assert.ok(report!.lines.some((l) => /^imported-2 \(.*\): the field "timeout" is not imported/.test(l)));
    await running(a, 'imported-2');
    await waitFor(() => a.host.registry.get('quiet'), 'the disabled server to be listed');
    assert.equal(a.host.registry.get('quiet')?.state.kind, 'stopped', 'a server disabled in the source stays stopped');
  });

  it("installs the walkthrough's media with the extension", async () => {
    const ext = vscode.extensions.all.find((e) => e.packageJSON.name === 'mcp-host')!;
    const steps: Array<{ media: { markdown: string } }> = ext.packageJSON.contributes.walkthroughs[0].steps;
    assert.equal(steps.length, 5);
    for (const step of steps) {
      const text = Buffer.from(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(ext.extensionUri, step.media.markdown))).toString(
        'utf8',
      );
      assert.match(text, /^# /, step.media.markdown);
    }
  });
});
