import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AuditLog } from '../../src/core/policy/audit';
import { describeFindings } from '../../src/core/scan/mask';
import type { AuditRecord, MaskFinding } from '../../src/core/policy/types';
import { definitionHash, type CreateMessageParams } from '../../src/core';
import type { ElicitationUi } from '../../src/vscode/ui/elicitationSteps';
import { api, repoRoot, running, serverScript, setServers, waitFor } from './helpers';
import { TestModels } from './testModels';

const AWS = 'AKIAIOSFODNN7EXAMPLE';
const GH = `ghp_${'x9Y8'.repeat(9)}`;
const everything = (extra: Record<string, unknown> = {}) => ({
  command: 'node',
  args: [serverScript('server-everything'), 'stdio'],
  ...extra,
});
const raw = (...scenario: string[]) => ({
  command: 'node',
  args: [path.join(repoRoot(), 'test', 'fixtures', 'raw-server.mjs'), ...scenario],
});
const resultText = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text ?? '').join('\n');

/** The audit log's records once every line appended so far is on disk. */
async function auditRecords(): Promise<AuditRecord[]> {
  const a = await api();
  await (a.host.audit as AuditLog).flushed();
  const text = await fs.readFile(a.host.auditFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditRecord);
}

async function auditOf(server: string, method: string): Promise<AuditRecord> {
  return waitFor(
    async () => (await auditRecords()).find((r) => r.server.name === server && r.method === method),
    `${server}'s ${method} record`,
  );
}

describe('what servers ask of us, audited and masked, in a real VS Code', function () {
  this.timeout(120_000);
  let models: TestModels;

  before(() => {
    models = new TestModels();
  });
  after(async () => {
    models.dispose();
    await setServers(undefined);
    for (const key of ['masking.inResults', 'masking.patterns'])
      await vscode.workspace.getConfiguration('mcpHost').update(key, undefined, vscode.ConfigurationTarget.Global);
  });

  it("masks a sampling request's secrets before the model, Review and the history see them, and audits it", async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({ 'masked-sampler': everything({ sampling: { models: ['test-echo'] } }) });
    const ev = await running(a, 'masked-sampler');
    await waitFor(async () => {
      await ev.refresh('tools');
      return ev.tools.some((t) => t.name === 'trigger-sampling-request');
    }, 'the sampling tool');
    const reviewed: Array<{ params: CreateMessageParams; masked: MaskFinding[] }> = [];
    a.ui.allowSampling = async () => 'review';
    a.ui.reviewSampling = async (_server, params, masked) => {
      reviewed.push({ params, masked });
      return params;
    };
    models.reset();
    // Set after activation: the masker follows the setting without a reload.
    await vscode.workspace
      .getConfiguration('mcpHost')
      .update('masking.patterns', [{ kind: 'ticket', pattern: 'PRJ-[0-9]{4}' }], vscode.ConfigurationTarget.Global);
    const { result } = await ev.rawClient!.callTool('trigger-sampling-request', {
      prompt: `deploy with ${AWS} and ${GH} for PRJ-1234`,
      maxTokens: 60,
    });
    assert.notEqual(result.isError, true, resultText(result));

    const [sent] = models.requests;
    const said = sent.messages.map((m) => m.text).join('\n');
    assert.match(said, /deploy with \[masked: aws-access-key\] and \[masked: github-token\] for \[masked: ticket\]/);
    assert.ok(!said.includes(AWS) && !said.includes(GH), said);

    assert.equal(reviewed.length, 1);
    assert.equal(describeFindings(reviewed[0].masked), '1 × aws-access-key, 1 × github-token, 1 × ticket', 'Review says what was masked');
    assert.match(JSON.stringify(reviewed[0].params.messages), /\[masked: aws-access-key\]/, 'Review shows the masked text');

    const record = a.host.sampling.history.find((r) => r.server === 'masked-sampler')!;
    assert.ok(!JSON.stringify(record.request).includes(AWS), 'the history keeps the masked form');
    const doc = await vscode.workspace.openTextDocument(await a.host.sampling.showHistory(a.docs));
    assert.match(doc.getText(), /masked before anyone saw it: 1 × aws-access-key, 1 × github-token, 1 × ticket/);

    const audited = await auditOf('masked-sampler', 'sampling/createMessage');
    assert.equal(audited.origin, 'server');
    assert.equal(audited.decision, 'asked-allowed');
    assert.deepEqual(audited.outcome, { kind: 'ok' });
    assert.equal(audited.name, 'test-echo-large', 'the model chosen');
    assert.deepEqual(audited.arguments, { messages: 1, maxTokens: 60, systemPrompt: true }, 'a summary, never the messages');
    assert.equal(audited.server.scope, 'user');
    assert.equal(audited.server.definition, definitionHash(ev.definition), 'the definition as the settings have it');
    assert.ok(!(await fs.readFile(a.host.auditFile, 'utf8')).includes(AWS));
  });

  it("audits a server's elicitation (the form's field names, the person's answer) and its roots/list", async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    const real = a.ui.elicitation;
    a.ui.elicitation = Object.assign(Object.create(real) as ElicitationUi, { consent: async () => 'decline' as const });
    try {
      await setServers({ 'asking-form': everything(), 'asking-roots': raw('peer-requests') });
      const ev = await running(a, 'asking-form');
      await waitFor(async () => {
        await ev.refresh('tools');
        return ev.tools.some((t) => t.name === 'trigger-elicitation-request');
      }, 'the elicitation tool');
      await ev.rawClient!.callTool('trigger-elicitation-request', {});
    } finally {
      a.ui.elicitation = real;
    }
    const form = await auditOf('asking-form', 'elicitation/create');
    assert.equal(form.origin, 'server');
    assert.equal(form.name, 'form');
    assert.equal(form.decision, 'asked-refused', 'the person declined');
    assert.deepEqual(form.outcome, { kind: 'ok' }, 'the decline was the answer sent');
    const fields = (form.arguments as { fields: string[] }).fields;
    assert.ok(fields.includes('name') && fields.includes('email'), JSON.stringify(form.arguments));

    const roots = await auditOf('asking-roots', 'roots/list');
    assert.equal(roots.origin, 'server');
    assert.equal(roots.decision, 'allowed');
    assert.deepEqual(roots.outcome, { kind: 'ok' });
  });

  it('records the sampling attempt of a server never offered sampling (mode deny) in the history and the audit log', async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    a.ui.allowSampling = async () => assert.fail('a deny server is not asked about');
    models.reset();
    await setServers({ 'unoffered-sampler': { ...raw('sample-with-context'), sampling: { mode: 'deny' } } });
    const record = await waitFor(() => a.host.sampling.history.find((r) => r.server === 'unoffered-sampler'), 'the refused attempt');
    assert.equal(record.decision, 'refused');
    assert.ok((record.notOffered?.bytes ?? 0) > 50, JSON.stringify(record));
    assert.match(record.error ?? '', /not offered/);
    const doc = await vscode.workspace.openTextDocument(await a.host.sampling.showHistory(a.docs));
    assert.match(doc.getText(), /refused: sampling is not offered to this server; its request \(\d+ bytes\) was not read/);
    const audited = await auditOf('unoffered-sampler', 'sampling/createMessage');
    assert.equal(audited.decision, 'refused');
    assert.deepEqual(audited.outcome, { kind: 'error', code: -32601 });
    assert.deepEqual(Object.keys(audited.arguments as object), ['paramsBytes']);
    assert.deepEqual(models.requests, [], 'no model was asked');
  });

  it('Export Audit Log… asks where through HostUi.saveLocation and copies the whole log there; a cancel writes nothing', async () => {
    const a = await api();
    await auditRecords();
    const original = await fs.readFile(a.host.auditFile, 'utf8').catch(() => '');
    const target = vscode.Uri.file(path.join(path.dirname(a.host.auditFile), `export-test-${process.pid}.jsonl`));
    const asked: string[] = [];
    a.ui.saveLocation = async (suggested) => {
      asked.push(path.basename(suggested.fsPath));
      return asked.length === 1 ? undefined : target;
    };
    await vscode.commands.executeCommand('mcpHost.exportAuditLog');
    await assert.rejects(fs.stat(target.fsPath), 'a cancelled export wrote a file');
    await vscode.commands.executeCommand('mcpHost.exportAuditLog');
    assert.deepEqual(asked, ['audit-export.jsonl', 'audit-export.jsonl']);
    const exported = await fs.readFile(target.fsPath, 'utf8');
    assert.ok(exported.startsWith(original), 'the export holds every record the log had');
    await fs.rm(target.fsPath, { force: true });
  });

  it("masks secrets in the person's own tool result only when mcpHost.masking.inResults is on", async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({ 'result-echo': everything() });
    const ev = await running(a, 'result-echo');
    const echo = await waitFor(async () => {
      await ev.refresh('tools');
      return ev.tools.find((t) => t.name === 'echo');
    }, 'the echo tool');
    const config = vscode.workspace.getConfiguration('mcpHost');
    const shown = async () => {
      const before = vscode.window.activeTextEditor?.document.uri.toString();
      await a.tools.call(ev, echo, { message: `key ${AWS}` });
      const doc = await waitFor(() => {
        const d = vscode.window.activeTextEditor?.document;
        return d?.uri.scheme === 'mcp-output' && d.uri.toString() !== before && d;
      }, 'the result document');
      return doc.getText();
    };
    await config.update('masking.inResults', true, vscode.ConfigurationTarget.Global);
    const masked = await shown();
    assert.match(masked, /Echo: key \[masked: aws-access-key\]/);
    assert.ok(!masked.includes(AWS), masked);
    await config.update('masking.inResults', undefined, vscode.ConfigurationTarget.Global);
    assert.match(await shown(), new RegExp(`Echo: key ${AWS}`), 'off (the default), the result shows what the server sent');
  });
});
