// The compatibility smoke scenario, run by test/harness/run-vscode-tests.js (phase "smoke") inside the
// extension host of each VS Code it checks: the oldest one engines.vscode claims and the newest
// (1.139.1). The extension is installed from the VSIX; the harness writes a stdio server
// (server-everything) into the machine settings before the window opens, so nothing here starts it:
// opening the window must be enough.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { McpHostTestSeam } from '../../src/extension';
import type { McpHostApi } from '../../src/vscode/api';

/** The exports with the internals the harness asks for (MCP_HOST_TEST_SEAM=1). */
type Exports = McpHostApi & { testing: McpHostTestSeam };
import { env } from '../vscode/harnessEnv';
import { waitFor } from '../vscode/helpers';

describe(`smoke on VS Code ${vscode.version}`, function () {
  this.timeout(120_000);
  const pkg = JSON.parse(fs.readFileSync(path.join(env.repo, 'package.json'), 'utf8'));
  const id = `${pkg.publisher}.${pkg.name}`;

  it('runs in the VS Code the harness meant to start', () => {
    const expected = process.env.MCP_HOST_EXPECT_VSCODE;
    assert.ok(expected, 'MCP_HOST_EXPECT_VSCODE is not set');
    assert.equal(vscode.version, expected);
  });

  it('is the VSIX build, and engines.vscode admits this VS Code', () => {
    const ext = vscode.extensions.getExtension(id);
    assert.ok(ext, `${id} is not installed`);
    assert.equal(ext.packageJSON.version, pkg.version);
    const min = /^\^?(\d+)\.(\d+)\.(\d+)$/.exec(pkg.engines.vscode);
    assert.ok(min, `engines.vscode ${pkg.engines.vscode} is not ^X.Y.Z`);
    const [major, minor] = vscode.version.split('.').map(Number);
    assert.ok(major === Number(min[1]) && minor >= Number(min[2]), `${vscode.version} is outside ${pkg.engines.vscode}`);
  });

  it('activates by itself when the window opens, and starts the server from settings', async () => {
    const ext = vscode.extensions.getExtension<Exports>(id)!;
    // No activate() call here: the activation events must do it.
    await waitFor(() => ext.isActive, 'the extension to activate on its own', 60_000);
    const api = ext.exports.testing;
    const server = await waitFor(
      () => {
        const h = api.host.registry.get('smoke');
        return h?.state.kind === 'running' && h;
      },
      'the smoke server to run',
      60_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; state: ${JSON.stringify(api.host.registry.get('smoke')?.state)}`);
    });
    const tools = await waitFor(() => server.tools.length > 0 && server.tools, 'its tools', 30_000);
    assert.ok(
      tools.some((t) => t.name === 'echo'),
      `tools: ${tools.map((t) => t.name).join(', ')}`,
    );
  });

  it('calls a tool through the running server', async () => {
    const api = vscode.extensions.getExtension<Exports>(id)!.exports.testing;
    const server = api.host.registry.get('smoke')!;
    const { result } = await server.rawClient!.callTool('echo', { message: 'hello from the smoke test' });
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    assert.match(text, /hello from the smoke test/);
  });

  it('declares sampling.tools only where the language model API calls tools, and refuses tool use clearly where it cannot', async () => {
    const ext = vscode.extensions.getExtension<Exports>(id)!;
    await waitFor(() => ext.isActive, 'the extension to activate', 60_000);
    const api = ext.exports.testing;
    api.ui.allowLaunch = async () => 'allow';
    const raw = path.join(env.repo, 'test', 'fixtures', 'raw-server.mjs');
    const config = vscode.workspace.getConfiguration('mcpHost');
    const servers = config.get<Record<string, unknown>>('servers') ?? {};
    await config.update(
      'servers',
      { ...servers, tooler: { command: process.execPath, args: [raw, 'sample-with-tools'], sampling: { mode: 'allow' } } },
      vscode.ConfigurationTarget.Global,
    );
    // 1.95 brought tool calling to the language model API.
    const [major, minor] = vscode.version.split('.').map(Number);
    const canCallTools = major > 1 || minor >= 95;
    const handle = await waitFor(
      () => api.host.registry.get('tooler')?.state.kind === 'running' && api.host.registry.get('tooler'),
      'the tool-sampling server to run',
      60_000,
    );
    assert.deepEqual(handle.client!.clientCapabilities.sampling, canCallTools ? { tools: {} } : {});
    const record = await waitFor(
      () => api.host.sampling.history.find((r) => r.server === 'tooler' && r.request.tools?.length),
      'its sampling request with tools',
    );
    assert.equal(record.decision, 'refused', JSON.stringify(record));
    // Here tool use itself is supported: whatever refuses the request (no model in this profile, or a
    // model that fails), it is not the "not supported" refusal.
    if (canCallTools)
      assert.doesNotMatch(record.error ?? '', /Sampling with tools is not supported/, `refused for another reason: ${record.error}`);
    else
      assert.match(
        record.error ?? '',
        /Sampling with tools is not supported: the language model API of this VS Code \(1\.\d+\.\d+\) cannot call tools/,
      );
  });
});
