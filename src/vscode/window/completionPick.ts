import * as vscode from 'vscode';
import { forDisplay, fromTemplate, McpError, type CompleteReference, type Redact, type ServerClient } from '../../core';
import type { GatedServer } from '../../core/policy/gated';
import { createShownQuickPick, type ShownPickItem } from './quickPicks';

export type CompletionItem = ShownPickItem & { value: string };

/**
 * The picker's rows: what the person typed, the server's suggestions, "leave empty" for an
 * optional value, and the hint under the first row. Each row keeps its value (what is sent); its
 * label is what is shown: through `redact` (the host's secrets), its schemes broken.
 */
export function completionItems(
  typed: string,
  suggestions: readonly string[],
  options: { required: boolean; hint?: string; redact: Redact },
): CompletionItem[] {
  const display = (text: string) => forDisplay(text, options.redact);
  const items: CompletionItem[] = [];
  if (typed && !suggestions.includes(typed))
    items.push({ label: display(typed), description: fromTemplate(vscode.l10n.t('as typed')), value: typed });
  for (const s of suggestions)
    items.push({ label: display(s), description: fromTemplate(vscode.l10n.t('suggested by the server')), value: s });
  if (!typed && !options.required) items.push({ label: display(''), description: fromTemplate(vscode.l10n.t('leave empty')), value: '' });
  // Under the first row (a separator would be hidden while the list is filtered).
  if (options.hint && items[0]) items[0] = { ...items[0], detail: display(options.hint) };
  return items;
}

/**
 * Asks for one value with suggestions from `completion/complete` as the person types; what they
 * typed is always a choice too. Earlier answers go along as context. Each request goes through the
 * person's gate (`gate`): fenced and audited like their other requests, never asked about.
 */
export function askWithCompletion(opts: {
  client: ServerClient;
  gate: GatedServer;
  ref: CompleteReference;
  argument: string;
  title: string;
  prompt: string;
  required: boolean;
  context: Record<string, string>;
  /** Where a failed completion request is noted: the server's log. */
  log: (message: string) => void;
  /** What the value is for (a template's description), shown with the choices. */
  hint?: string;
  /** The host's: the server's suggestions and descriptions are shown through it. */
  redact: Redact;
}): Promise<string | undefined> {
  const canComplete = !!opts.client.serverCapabilities?.completions;
  const display = (text: string) => forDisplay(text, opts.redact);
  return new Promise((resolve) => {
    const qp = createShownQuickPick<CompletionItem>();
    qp.title = display(opts.title);
    qp.placeholder = display(opts.prompt);
    qp.ignoreFocusOut = true;
    qp.matchOnDescription = false;
    let suggestions: string[] = [];
    let generation = 0;
    const render = () => {
      qp.items = completionItems(qp.value, suggestions, opts);
    };
    const fetch = async () => {
      if (!canComplete) return render();
      const mine = ++generation;
      qp.busy = true;
      try {
        const r = await opts.gate.complete(
          { ref: opts.ref, argument: { name: opts.argument, value: qp.value }, context: { arguments: opts.context } },
          { timeoutMs: 5000 },
        );
        if (mine === generation) suggestions = r.sent ? r.result.completion.values.slice(0, 100) : [];
        if (!r.sent) opts.log(`completion/complete for ${opts.argument} was not sent: ${r.reason}`);
      } catch (e) {
        if (mine === generation) suggestions = [];
        // Typing goes on without suggestions; the log says why there are none.
        opts.log(`completion/complete for ${opts.argument} failed: ${McpError.from(e).message}`);
      } finally {
        if (mine === generation) {
          qp.busy = false;
          render();
        }
      }
    };
    qp.onDidChangeValue(() => void fetch());
    let done = false;
    const finish = (v: string | undefined) => {
      if (done) return;
      done = true;
      resolve(v);
      qp.dispose();
    };
    qp.onDidAccept(() => {
      const chosen = qp.selectedItems[0]?.value ?? qp.value;
      if (!chosen && opts.required) return;
      finish(chosen);
    });
    qp.onDidHide(() => finish(undefined));
    qp.show();
    void fetch();
  });
}
