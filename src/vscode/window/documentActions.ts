import * as vscode from 'vscode';
import { fromTemplate, joinShown, withIcon, type ShownText } from '../../core/render/shownText';
import { showStatusMessage } from './statusBar';
import { showDocument } from './windowInputs';

const COMMAND = 'mcpHost.documentAction';

/**
 * Asks for a decision about a document the person is editing (arguments as JSON, a sampling
 * request under review). The choices show as CodeLenses at the top of the document, where they
 * stay while the person edits, and the question in the status bar until it is answered; closing
 * the document counts as cancelling. No notification: the API cannot close one, so a toast would
 * linger in the notification centre with buttons that no longer do anything.
 */
export class DocumentActions implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly pending = new Map<
    string,
    { actions: readonly string[]; settle: (action: string | undefined) => void; status: vscode.Disposable }
  >();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly registrations: vscode.Disposable[];

  constructor() {
    this.registrations = [
      vscode.languages.registerCodeLensProvider({ scheme: 'untitled' }, this),
      vscode.commands.registerCommand(COMMAND, (uri: string, action: string) => this.settle(uri, action)),
      vscode.workspace.onDidCloseTextDocument((doc) => this.settle(doc.uri.toString(), undefined)),
    ];
  }

  /** Resolves with the chosen action, or undefined when the person dismisses or closes the document. */
  ask(doc: vscode.TextDocument, message: ShownText, actions: readonly ShownText[]): Promise<string | undefined> {
    const key = doc.uri.toString();
    this.settle(key, undefined);
    const choices = fromTemplate(vscode.l10n.t('(choose above the document: {0})'), joinShown(actions, ' | '));
    const status = showStatusMessage(withIcon('edit', joinShown([message, choices], ' ')));
    const answer = new Promise<string | undefined>((resolve) => this.pending.set(key, { actions, settle: resolve, status }));
    this.changed.fire();
    return answer;
  }

  /** Closes a scratch document once its decision is made, without a "Save?" prompt. */
  async discard(doc: vscode.TextDocument): Promise<void> {
    if (doc.isClosed) return;
    await showDocument(doc, { preview: false });
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const entry = this.pending.get(doc.uri.toString());
    if (!entry) return [];
    const top = new vscode.Range(0, 0, 0, 0);
    return entry.actions.map(
      (action) => new vscode.CodeLens(top, { title: action, command: COMMAND, arguments: [doc.uri.toString(), action] }),
    );
  }

  private settle(key: string, action: string | undefined): void {
    const entry = this.pending.get(key);
    if (!entry) return;
    this.pending.delete(key);
    entry.status.dispose();
    this.changed.fire();
    entry.settle(action);
  }

  dispose(): void {
    for (const key of [...this.pending.keys()]) this.settle(key, undefined);
    for (const r of this.registrations) r.dispose();
    this.changed.dispose();
  }
}
