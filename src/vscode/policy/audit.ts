import * as path from 'node:path';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { AuditLog } from '../../core/policy/audit';
import { MAX_VERIFIED_BYTES, recordsAfterHead, verifyAuditFile } from '../../core/policy/auditVerify';
import { copyPolicyFile, readPolicyFile, writePolicyFile } from '../../core/files/policyFile';
import { createMasker, type MaskingPattern } from '../../core/scan/mask';
import type { AnyAuditRecord, AuditRecord, Masker } from '../../core/policy/types';
import { forDisplay, fromTemplate, nothingToRedact, type ShownText } from '../../core';
import { Settings } from '../common/ids';
import { cachedSetting } from '../common/settingCache';
import { isString, lockedSetting } from '../common/organisation';
import { notify } from '../window/notifications';
import { pickOne, type ShownPickItem } from '../window/quickPicks';
import type { OutputDocuments } from '../common/outputDocuments';
import { showDocument } from '../window/windowInputs';
import type { HostUi } from '../ui/hostUi';
import type { AuditTrust } from './auditTrust';

/**
 * The masker of the person's settings (`mcpHost.masking.patterns` and the built-in shapes), built
 * again when the setting changes; invalid patterns are named once per change in the extension
 * host's log. The one place every part that masks (sampling, the audit log, result documents, the
 * chat gateway) gets it from.
 */
export const configuredMasker = cachedSetting(`${Settings.section}.${Settings.maskingPatterns}`, (): Masker => {
  const patterns = vscode.workspace.getConfiguration(Settings.section).get<MaskingPattern[]>(Settings.maskingPatterns, []);
  const { masker, problems } = createMasker(Array.isArray(patterns) ? patterns : []);
  for (const problem of problems) console.warn(`MCP Host: mcpHost.masking.patterns: ${problem}`);
  return masker;
});

/** A masker that is always the one of the settings at the moment it masks (for the audit log, which lives as long as the extension). */
const settingsMasker: Masker = {
  maskText: (text) => configuredMasker().maskText(text),
  maskParts: (parts) => configuredMasker().maskParts(parts),
  maskValue: (value) => configuredMasker().maskValue(value),
};

/**
 * A text of the person's own result documents (tool results, resource reads, prompts): masked
 * when `mcpHost.masking.inResults` is on (user scope), shown as the server sent it otherwise.
 */
export function maskedForPerson(text: string): string {
  const inspected = vscode.workspace.getConfiguration(Settings.section).inspect<boolean>('masking.inResults');
  const on = inspected?.globalValue ?? inspected?.defaultValue ?? false;
  return on ? configuredMasker().maskText(text).text : text;
}

/** `mcpHost.audit.file` as the organisation locks it, else the person's (user or machine scope only), else `audit.jsonl` in the extension's global storage. */
export function auditFile(context: vscode.ExtensionContext): string {
  const chosen = lockedSetting('mcpHost.audit.file', isString).value;
  return chosen && chosen.trim() ? chosen : path.join(context.globalStorageUri.fsPath, 'audit.jsonl');
}

/**
 * One audit log for the extension's lifetime, its records MAC'd under the file's key and its head
 * remembered (./auditTrust.ts); a failing write is shown once per streak, and calls go on.
 */
export function createAuditLog(
  file: string,
  redact: (text: string) => string,
  trust: AuditTrust,
  onRecords?: (records: readonly AnyAuditRecord[]) => void,
): AuditLog {
  void fs.mkdir(path.dirname(file), { recursive: true }).catch(() => undefined);
  return new AuditLog({
    file,
    redact,
    masker: settingsMasker,
    key: () => trust.key(),
    onWritten: (head) => trust.remember(head),
    onRecords,
    onError: (error) =>
      void notify(
        'warning',
        fromTemplate(
          vscode.l10n.t('MCP Host could not write the audit log ({0}): {1}'),
          forDisplay(file, nothingToRedact),
          forDisplay(error.message, redact),
        ),
      ),
  });
}

function describe(record: AuditRecord): string {
  const outcome = record.outcome.kind === 'error' ? `error ${record.outcome.code}` : record.outcome.kind;
  const args = record.arguments === undefined ? '' : `\n    ${JSON.stringify(record.arguments)}`;
  return `${record.time}  ${record.origin}  ${record.server.name}  ${record.method}${record.name ? ` ${record.name}` : ''}  ${record.decision} → ${outcome} (${record.ms} ms)${args}`;
}

export async function showAuditLog(file: string, docs: OutputDocuments): Promise<void> {
  const verdict = await verifyAuditFile(file).catch(() => undefined);
  // Requests only: a rotation record is how the chain crosses files.
  const records = (verdict?.ok ? verdict.records : await readRecords(file)).filter((r): r is AuditRecord => r.kind === undefined);
  const values = (pick: (r: AuditRecord) => string) => [...new Set(records.map(pick))];
  // Server names in the records were written by the gate, already redacted and masked; still shown as server text.
  const shownText = (text: string) => forDisplay(text, nothingToRedact);
  const items: Array<ShownPickItem & { filter?: (r: AuditRecord) => boolean }> = [
    { label: fromTemplate(vscode.l10n.t('Every record')), description: forDisplay(String(records.length), nothingToRedact) },
    ...values((r) => r.server.name).map((v) => ({
      label: shownText(v),
      description: fromTemplate(vscode.l10n.t('server')),
      filter: (r: AuditRecord) => r.server.name === v,
    })),
    ...values((r) => r.origin).map((v) => ({
      label: shownText(v),
      description: fromTemplate(vscode.l10n.t('origin')),
      filter: (r: AuditRecord) => r.origin === v,
    })),
    ...values((r) => r.decision).map((v) => ({
      label: shownText(v),
      description: fromTemplate(vscode.l10n.t('decision')),
      filter: (r: AuditRecord) => r.decision === v,
    })),
  ];
  const chosen = await pickOne(items, { title: fromTemplate(vscode.l10n.t('Show Audit Log')), placeHolder: shownText(file) });
  if (!chosen) return;
  const shown = records.filter(chosen.filter ?? (() => true)).reverse();
  const uri = docs.put('audit', 'audit-log.txt', `${file}\n\n${shown.map(describe).join('\n')}\n`);
  await showDocument(uri, { preview: false });
}

async function readRecords(file: string): Promise<AnyAuditRecord[]> {
  // As verification reads it: no link followed, no FIFO waited on.
  const text = await readPolicyFile(file, MAX_VERIFIED_BYTES).catch(() => '');
  return text
    .split('\n')
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as AnyAuditRecord];
      } catch {
        return [];
      }
    });
}

/**
 * Verify Audit Log: the chain, the MACs (with the file's key, when one was made), and the head this
 * window wrote last, which must still be in the chain. Returns what it showed (for tests).
 */
export async function verifyAuditLog(file: string, trust: AuditTrust): Promise<{ ok: boolean; message: string }> {
  const key = await trust.existingKey().catch(() => undefined);
  const verdict = await verifyAuditFile(file, { key }).catch((error: Error) => ({
    ok: false as const,
    file,
    line: 0,
    reason: error.message,
  }));
  const show = (ok: boolean, message: ShownText) => {
    void notify(ok ? 'info' : 'error', message);
    return { ok, message: message as string };
  };
  if (!verdict.ok) {
    return show(
      false,
      fromTemplate(
        vscode.l10n.t('Audit log broken at {0}, line {1}: {2}'),
        forDisplay(verdict.file, nothingToRedact),
        verdict.line,
        forDisplay(verdict.reason, nothingToRedact),
      ),
    );
  }
  const remembered = trust.rememberedHead();
  if (remembered && recordsAfterHead(verdict.records, remembered) === undefined) {
    return show(
      false,
      fromTemplate(
        vscode.l10n.t(
          'Audit log cut: the last record MCP Host wrote ({0}) is not in it. Records were removed from its end (or older files deleted), or the log was replaced.',
        ),
        forDisplay(remembered, nothingToRedact),
      ),
    );
  }
  const macs = !verdict.macs.checked
    ? vscode.l10n.t('MACs not checked (no key yet)')
    : verdict.macs.unsigned
      ? vscode.l10n.t('MACs valid from record {0} on (the ones before were written without)', verdict.macs.unsigned + 1)
      : vscode.l10n.t('MACs valid');
  return show(
    true,
    fromTemplate(
      vscode.l10n.t('Audit log: {0} records, chain intact, {1}, head {2}.'),
      verdict.records.length,
      forDisplay(macs, nothingToRedact),
      forDisplay(verdict.head, nothingToRedact),
    ),
  );
}

/**
 * Export Audit Key: the file's key as 64 hex digits in a file of mode 0600, for
 * `mcp-host audit verify FILE --audit-key KEYFILE` (and for CLI runs writing to the same file).
 */
export async function exportAuditKey(file: string, trust: AuditTrust, ui: Pick<HostUi, 'saveLocation'>): Promise<void> {
  const target = await ui.saveLocation(vscode.Uri.file(path.join(path.dirname(file), 'audit.key')), { Key: ['key'] });
  if (!target) return;
  try {
    const key = await trust.key();
    // Written only to a regular file that is not a link (../../core/files/policyFile.ts); one that existed is made 0600 too.
    await writePolicyFile(target.fsPath, `${key.toString('hex')}\n`, { mode: 0o600 });
    void notify(
      'info',
      fromTemplate(
        vscode.l10n.t('Audit key exported to {0}. Whoever has it can rewrite the audit log undetected: keep it as you keep a password.'),
        forDisplay(target.fsPath, nothingToRedact),
      ),
    );
  } catch (error) {
    void notify(
      'error',
      fromTemplate(
        vscode.l10n.t('MCP Host: the audit key could not be exported: {0}'),
        forDisplay((error as Error).message, nothingToRedact),
      ),
    );
  }
}

export async function exportAuditLog(file: string, ui: Pick<HostUi, 'saveLocation'>): Promise<void> {
  const target = await ui.saveLocation(vscode.Uri.file(path.join(path.dirname(file), 'audit-export.jsonl')), { JSON: ['jsonl'] });
  if (!target) return;
  try {
    // The log is read, and the copy written, without following a link at either (../../core/files/policyFile.ts).
    if (target.scheme === 'file') await copyPolicyFile(file, target.fsPath);
    else await vscode.workspace.fs.writeFile(target, Buffer.from(await readPolicyFile(file, MAX_VERIFIED_BYTES)));
  } catch (error) {
    void notify(
      'error',
      fromTemplate(
        vscode.l10n.t('MCP Host: the audit log could not be exported: {0}'),
        forDisplay((error as Error).message, nothingToRedact),
      ),
    );
  }
}
