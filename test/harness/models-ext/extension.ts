// The deterministic test models as an extension of their own, for the Playwright profile. Each
// request the models receive is appended as a JSON line to $MCP_HOST_TEST_MODELS_LOG, so a
// browser-driven test can check what the provider was sent. Each activation (one per extension
// host, i.e. per window) appends the host's display language to $MCP_HOST_TEST_ENV_LOG, so a test can
// check what vscode.env.language the extensions of that window see.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { TestModels } from '../../vscode/testModels';

export function activate(context: vscode.ExtensionContext): void {
  const envLog = process.env.MCP_HOST_TEST_ENV_LOG;
  if (envLog) fs.appendFileSync(envLog, `${JSON.stringify({ language: vscode.env.language })}\n`);
  const log = process.env.MCP_HOST_TEST_MODELS_LOG;
  const models = new TestModels((request) => {
    if (log) fs.appendFileSync(log, `${JSON.stringify(request)}\n`);
  });
  context.subscriptions.push(models);
}
