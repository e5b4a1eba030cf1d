import * as path from 'node:path';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { AuditLog, verifyAuditFile } from '../core/policy/audit';
import { createMasker, type MaskingPattern } from '../core/policy/mask';
import type { AuditRecord, Masker } from '../core/policy/types';
import { Settings } from './ids';
import type { OutputDocuments } from './outputDocuments';

/** The masker of the person's settings; invalid patterns are named once in the extension host's log. */
export function configuredMasker(): Masker {
  const patterns = vscode.workspace.getConfiguration(Settings.section).get<MaskingPattern[]>('masking.patterns', []);
  const { masker, problems } = createMasker(Array.isArray(patterns) ? patterns : []);
  for (const problem of problems) console.warn(`MCP Host: mcpHost.masking.patterns: ${problem}`);
  return masker;
}

/** `mcpHost.audit.file` (user or machine scope only), else `audit.jsonl` in the extension's global storage. */
export function auditFile(context: vscode.ExtensionContext): string {
  const inspected = vscode.workspace.getConfiguration(Settings.section).inspect<string>('audit.file');
  const chosen = inspected?.globalValue;
  return chosen && chosen.trim() ? chosen : path.join(context.globalStorageUri.fsPath, 'audit.jsonl');
}

/** One audit log for the extension's lifetime; a disk error is shown once, and calls go on. */
export function createAuditLog(file: string, redact: (text: string) => string): AuditLog {
  void fs.mkdir(path.dirname(file), { recursive: true }).catch(() => undefined);
  return new AuditLog({
    file,
    redact,
    masker: configuredMasker(),
    onError: (error) => void vscode.window.showWarningMessage(vscode.l10n.t('MCP Host could not write the audit log ({0}): {1}', file, error.message)),
  });
}

function describe(record: AuditRecord): string {
  const outcome = record.outcome.kind === 'error' ? `error ${record.outcome.code}` : record.outcome.kind;
  const args = record.arguments === undefined ? '' : `\n    ${JSON.stringify(record.arguments)}`;
  return `${record.time}  ${record.origin}  ${record.server.name}  ${record.method}${record.name ? ` ${record.name}` : ''}  ${record.decision} → ${outcome} (${record.ms} ms)${args}`;
}

export async function showAuditLog(file: string, docs: OutputDocuments): Promise<void> {
  const verdict = await verifyAuditFile(file).catch(() => undefined);
  const records = verdict?.ok ? verdict.records : await readRecords(file);
  const values = (pick: (r: AuditRecord) => string) => [...new Set(records.map(pick))];
  const items: Array<vscode.QuickPickItem & { filter?: (r: AuditRecord) => boolean }> = [
    { label: vscode.l10n.t('Every record'), description: String(records.length) },
    ...values((r) => r.server.name).map((v) => ({ label: v, description: vscode.l10n.t('server'), filter: (r: AuditRecord) => r.server.name === v })),
    ...values((r) => r.origin).map((v) => ({ label: v, description: vscode.l10n.t('origin'), filter: (r: AuditRecord) => r.origin === v })),
    ...values((r) => r.decision).map((v) => ({ label: v, description: vscode.l10n.t('decision'), filter: (r: AuditRecord) => r.decision === v })),
  ];
  const chosen = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Show Audit Log'), placeHolder: file });
  if (!chosen) return;
  const shown = records.filter(chosen.filter ?? (() => true)).reverse();
  const uri = docs.put('audit', 'audit-log.txt', `${file}\n\n${shown.map(describe).join('\n')}\n`);
  await vscode.window.showTextDocument(uri, { preview: false });
}

async function readRecords(file: string): Promise<AuditRecord[]> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as AuditRecord];
      } catch {
        return [];
      }
    });
}

export async function verifyAuditLog(file: string): Promise<void> {
  const verdict = await verifyAuditFile(file).catch((error: Error) => ({ ok: false as const, file, line: 0, reason: error.message }));
  if (verdict.ok) void vscode.window.showInformationMessage(vscode.l10n.t('Audit log: {0} records, chain intact.', verdict.records.length));
  else void vscode.window.showErrorMessage(vscode.l10n.t('Audit log broken at {0}, line {1}: {2}', verdict.file, verdict.line, verdict.reason));
}

export async function exportAuditLog(file: string): Promise<void> {
  const target = await vscode.window.showSaveDialog({ defaultUri: vscode.Uri.file(path.join(path.dirname(file), 'audit-export.jsonl')), filters: { JSON: ['jsonl'] } });
  if (!target) return;
  await vscode.workspace.fs.copy(vscode.Uri.file(file), target, { overwrite: true });
}
