import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AuditLog } from '../../src/core/policy/audit';
import { verifyAuditFile } from '../../src/core/policy/auditVerify';
import { api } from './helpers';

type Shown = { ok: boolean; message: string };

describe('Verify Audit Log and Export Audit Key, in a real VS Code', function () {
  this.timeout(60_000);

  it('shows the head, catches records cut from the end by the head this window wrote, and exports the key 0600', async () => {
    const a = await api();
    const log = a.host.audit as AuditLog;
    for (const name of ['audit-verify-1', 'audit-verify-2', 'audit-verify-3']) {
      log.append({
        time: new Date().toISOString(),
        origin: 'person',
        server: { name: 'audit-verify', scope: 'user', definition: 'd'.repeat(64) },
        method: 'tools/call',
        name,
        decision: 'allowed',
        outcome: { kind: 'ok' },
        ms: 1,
      });
    }
    await log.flushed();
    const file = a.host.auditFile;
    const original = await fs.readFile(file, 'utf8');
    const lines = original.trimEnd().split('\n');
    const head = (JSON.parse(lines[lines.length - 1]) as { hash: string }).hash;

    const good = (await vscode.commands.executeCommand('mcpHost.verifyAuditLog')) as Shown;
    assert.equal(good.ok, true, good.message);
    assert.ok(good.message.includes(head), good.message);
    assert.match(good.message, /MACs valid/);

    try {
      // The last record deleted: a chain that still verifies on its own, but not with the head this window wrote.
      await fs.writeFile(file, `${lines.slice(0, -1).join('\n')}\n`);
      const cut = (await vscode.commands.executeCommand('mcpHost.verifyAuditLog')) as Shown;
      assert.equal(cut.ok, false);
      assert.match(cut.message, /Audit log cut/);
      assert.ok(cut.message.includes(head), cut.message);
    } finally {
      await fs.writeFile(file, original);
    }

    const target = vscode.Uri.file(path.join(path.dirname(file), `audit-key-test-${process.pid}.key`));
    a.ui.saveLocation = async () => target;
    try {
      await vscode.commands.executeCommand('mcpHost.exportAuditKey');
      const stat = await fs.stat(target.fsPath);
      if (process.platform !== 'win32') assert.equal(stat.mode & 0o777, 0o600);
      const key = Buffer.from((await fs.readFile(target.fsPath, 'utf8')).trim(), 'hex');
      assert.equal(key.length, 32);
      const verdict = await verifyAuditFile(file, { key });
      assert.ok(verdict.ok && verdict.macs.checked, JSON.stringify(verdict).slice(0, 300));
      const wrong = await verifyAuditFile(file, { key: Buffer.alloc(32, 1) });
      assert.equal(wrong.ok, false, 'another key does not verify the MACs');
    } finally {
      await fs.rm(target.fsPath, { force: true });
    }
  });
});
