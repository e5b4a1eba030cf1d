// The text of a form's consent, apart from ./forms.ts (the entry of dist/forms.js, whose exports
// are the bundle's), so a test can read what the modal shows.
import * as vscode from 'vscode';
import type { FormField } from '../../core';
import { fromTemplate, joinShown, SHOWN_MAX, type ShownText } from '../../core/render/shownText';

/** How a form shows the server's texts: through the host's redactor, links broken. */
export type Display = (text: string, max?: number) => ShownText;

/** The consent to a form as its modal shows it: the server's question and the fields it asks for. */
export function formConsentText(
  server: string,
  message: string,
  fields: FormField[],
  display: Display,
): { question: ShownText; detail: ShownText } {
  const names = fields.map((f) => f.title);
  return {
    question: fromTemplate(vscode.l10n.t('The MCP server "{0}" asks for information'), display(server)),
    detail: joinShown(
      [display(message, SHOWN_MAX * 4), names.length ? fromTemplate(vscode.l10n.t('Fields: {0}'), display(names.join(', '))) : undefined],
      '\n',
    ),
  };
}
