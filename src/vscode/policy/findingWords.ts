/**
 * The scan's findings (../../core/scan/detectors.ts) in words a person understands, for the
 * confirmation of a flagged tool or prompt and for the launch consent: what was found, where, and
 * the text (invisible characters already made visible by the scan).
 */
import * as vscode from 'vscode';
import type { Detector, ScanFinding } from '../../core/scan/detectors';

/** What each detector means for the person reading the question. */
function meaning(detector: Detector): string {
  switch (detector) {
    case 'invisible-characters':
      return vscode.l10n.t('hidden text that you cannot see but the AI model reads');
    case 'model-instructions':
      return vscode.l10n.t('instructions to the AI model instead of a description');
    case 'other-servers-tools':
      return vscode.l10n.t("instructions about how to use other servers' tools");
    case 'sensitive-files':
      return vscode.l10n.t('a mention of private files (SSH keys, .env files, credentials)');
    case 'soliciting-parameter':
      return vscode.l10n.t('a parameter that asks the AI model for secrets, files or the conversation');
    case 'outsized-description':
      return vscode.l10n.t('a description too long to read before approving it');
  }
}

/** Where in the definition a finding sits, as a person names it. */
function place(f: ScanFinding): string {
  if (f.kind === 'instructions') return vscode.l10n.t("the server's instructions");
  const parameter = /^\/inputSchema\/properties\/([^/]+)/.exec(f.pointer);
  if (parameter) return vscode.l10n.t('its parameter {0}', parameter[1].replace(/~1/g, '/').replace(/~0/g, '~'));
  const argument = /^\/arguments\/(\d+)/.exec(f.pointer);
  if (argument) return vscode.l10n.t('its argument no. {0}', Number(argument[1]) + 1);
  if (f.pointer.startsWith('/inputSchema')) return vscode.l10n.t('its input schema');
  if (f.pointer.startsWith('/outputSchema')) return vscode.l10n.t('its output schema');
  if (f.pointer === '/description') return vscode.l10n.t('its description');
  if (f.pointer === '/name') return vscode.l10n.t('its name');
  if (f.pointer === '/title') return vscode.l10n.t('its title');
  return f.pointer;
}

/** One line a finding: "instructions to the AI model instead of a description, in its description: “<IMPORTANT>…”". */
export function findingLines(findings: readonly ScanFinding[], withName = false): string[] {
  return findings.map((f) => {
    const item = f.kind === 'tool' ? vscode.l10n.t('the tool {0}', f.name) : vscode.l10n.t('the prompt {0}', f.name);
    const where = withName && f.kind !== 'instructions' ? `${item}, ${place(f)}` : place(f);
    return `• ${vscode.l10n.t('{0}, in {1}: “{2}”', meaning(f.detector), where, f.text)}`;
  });
}
