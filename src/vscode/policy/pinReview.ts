/**
 * Review Changes: a suspended definition (./pins.ts) shown old beside new in VS Code's diff
 * editor, as read-only documents of JSON text (a description is inert text there, as everywhere),
 * with Accept and Keep Suspended.
 */
import * as vscode from 'vscode';
import { isBoolean, lockedSetting } from '../common/organisation';
import { describeChange } from '../../core/policy/pins';
import { forDisplay, fromTemplate, type Redact, type ServerHandle, type ShownText } from '../../core';
import type { ChangedDefinition, ChangedDefinitionAnswer } from '../common/answers';
import { askModal } from '../window/notifications';
import { definitionsText, PinnedDocuments, type DefinitionChange, type DefinitionPins } from './pins';
import { isFlaggedMember } from '../../core/scan/detectors';
import { findingLines } from './findingWords';
import type { HostUi } from '../ui/hostUi';

const itemText = (c: ChangedDefinition): string =>
  c.kind === 'instructions'
    ? vscode.l10n.t("the server's instructions")
    : `${c.kind === 'tools' ? vscode.l10n.t('tool') : vscode.l10n.t('prompt')} ${c.name}: ${describeChange(c.changed)}`;

/** The default `HostUi.confirmChangedDefinition`: one modal naming what changed, and what the scan found in words. */
export async function askChangedDefinition(server: string, change: ChangedDefinition, redact: Redact): Promise<ChangedDefinitionAnswer> {
  const once = vscode.l10n.t('Allow Once');
  const review = vscode.l10n.t('Review Changes');
  const { question, detail } = changedDefinitionText(server, change, redact);
  const pick = await askModal('warning', question, detail, once, review);
  return pick === once ? 'once' : pick === review ? 'review' : 'cancel';
}

/**
 * The question and detail of a suspended tool's or prompt's confirmation: what changed since the
 * person approved it, and, when MCP Host's scan flagged it, each finding in words ("hidden text
 * that you cannot see but the AI model reads, in its description: “<tags: …>”").
 */
export function changedDefinitionText(
  server: string,
  change: ChangedDefinition,
  redact: Redact,
): { question: ShownText; detail: ShownText } {
  const redefined = change.changed.filter((m) => !isFlaggedMember(m));
  const found = change.findings?.length
    ? `${vscode.l10n.t("MCP Host's scan found in it:")}\n${findingLines(change.findings).join('\n')}`
    : undefined;
  const [name, from] = [forDisplay(change.name, redact), forDisplay(server, redact)];
  const question =
    redefined.length || !found
      ? fromTemplate(vscode.l10n.t('"{0}" of the MCP server "{1}" changed since you approved it. Run it anyway?'), name, from)
      : fromTemplate(vscode.l10n.t('"{0}" of the MCP server "{1}" was flagged by MCP Host\'s scan. Run it anyway?'), name, from);
  const parts = [
    redefined.length ? vscode.l10n.t('Changed: {0}.', describeChange(redefined)) : undefined,
    found,
    vscode.l10n.t('Its "Always Allow" and read-only trust are suspended, and no AI model is offered it, until you review and accept it.'),
  ].filter((p): p is string => p !== undefined);
  return { question, detail: forDisplay(parts.join('\n\n'), redact, Number.POSITIVE_INFINITY) };
}

/** The default `HostUi.acceptDefinitionChanges`: a modal beside the open diff. */
export async function askAcceptChanges(server: string, changes: ChangedDefinition[], redact: Redact): Promise<'accept' | 'keep'> {
  const accept = vscode.l10n.t('Accept');
  const keep = vscode.l10n.t('Keep Suspended');
  const pick = await askModal(
    'warning',
    fromTemplate(vscode.l10n.t('Accept the changed definitions of the MCP server "{0}"?'), forDisplay(server, redact)),
    forDisplay(changes.map(itemText).join('\n'), redact, Number.POSITIVE_INFINITY),
    accept,
    keep,
  );
  return pick === accept ? 'accept' : 'keep';
}

/** Opens the diff of a server's changes (or of one tool's or prompt's) and accepts them if the person says so. */
export class PinReview implements vscode.Disposable {
  private readonly registered = PinnedDocuments.register();

  constructor(
    private readonly pins: DefinitionPins,
    private readonly ui: HostUi,
    private readonly redact: Redact,
  ) {}

  dispose(): void {
    this.registered.disposable.dispose();
  }

  /** `only`: one tool or prompt; else every change of the server. Resolves true when the person accepted. */
  async review(handle: ServerHandle, only?: { kind: 'tools' | 'prompts'; name: string }): Promise<boolean> {
    const changes = this.pins.changes(handle).filter((c) => !only || (c.kind === only.kind && c.name === only.name));
    if (!changes.length) {
      void this.ui.notify(
        'info',
        fromTemplate(vscode.l10n.t('Nothing of "{0}" changed since you approved it.'), forDisplay(handle.name, this.redact)),
      );
      return false;
    }
    await this.openDiff(handle.name, changes);
    if (lockedSetting('mcpHost.pins.acceptChanges', isBoolean).value === false) {
      // The organisation keeps changed definitions suspended: the diff is shown, nothing can be accepted.
      void this.ui.notify(
        'warning',
        fromTemplate(
          vscode.l10n.t(
            'Your organisation does not let changed definitions be accepted (mcpHost.pins.acceptChanges): "{0}" stays suspended until its server goes back to what was approved.',
          ),
          forDisplay(handle.name, this.redact),
        ),
      );
      return false;
    }
    const answer = await this.ui.acceptDefinitionChanges(
      handle.name,
      changes.map((c) => ({ kind: c.kind, name: c.name, changed: c.changed })),
    );
    if (answer !== 'accept') return false;
    await this.pins.accept(handle, changes);
    // A name listed with two definitions (or one holding 1e999) has no one definition to accept: each use still asks.
    const unpinnable = changes.filter((c) => c.now.unpinnable);
    if (unpinnable.length) {
      void this.ui.notify(
        'warning',
        fromTemplate(
          vscode.l10n.t('Still suspended: {0}. MCP Host cannot pin it, so each use asks you first.'),
          forDisplay(unpinnable.map(itemText).join('; '), this.redact),
        ),
      );
      return false;
    }
    const locked = [...new Set(changes.flatMap((c) => (c.lockFile ? [c.lockFile] : [])))];
    if (locked.length) {
      // A lock file only tightens: what it suspends stays suspended until the file itself is updated.
      void this.ui.notify(
        'warning',
        fromTemplate(
          vscode.l10n.t('Still suspended by the workspace lock file {0}: update it (mcp-host … pin FILE) to lift it.'),
          forDisplay(locked.join(', '), this.redact),
        ),
      );
      return false;
    }
    return true;
  }

  private async openDiff(server: string, changes: DefinitionChange[]): Promise<void> {
    const docs = this.registered.documents;
    const label = changes.length === 1 ? changes[0].name : server;
    const before = docs.add(`${label} (approved)`, definitionsText(changes.map((c) => ({ ...c, pinned: c.pinned }))));
    const after = docs.add(`${label} (now)`, definitionsText(changes.map((c) => ({ ...c, pinned: c.now }))));
    const title = vscode.l10n.t('{0}: approved ↔ now', label);
    await vscode.commands.executeCommand('vscode.diff', before, after, title, { preview: false });
  }
}
