import * as vscode from 'vscode';
import { fromTemplate, McpError, promptText, renderPrompt, titleAndName, type Prompt, type ServerHandle } from '../../core';
import { knownIcon, warmIcons } from '../common/icons';
import { askWithCompletion } from '../window/completionPick';
import type { McpHost } from '../host/host';
import { notify } from '../window/notifications';
import { pickOne, type ShownPickItem } from '../window/quickPicks';
import { showStatusMessage } from '../window/statusBar';
import type { OutputDocuments } from '../common/outputDocuments';
import { toResourceUri } from '../resources/uri';
import { maskedForPerson } from '../policy/audit';
import { showDocument } from '../window/windowInputs';

/** Pick a prompt, fill its arguments with completion help, open the rendered messages. */
export class PromptActions {
  /** The plain text of each rendered prompt document, for "Copy". */
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly host: McpHost,
    private readonly docs: OutputDocuments,
  ) {}

  async run(preset?: { server: ServerHandle; prompt: Prompt }): Promise<vscode.Uri | undefined> {
    const chosen = preset ?? (await this.pick());
    if (!chosen) return undefined;
    const { server, prompt } = chosen;
    const client = server.client;
    if (!client) {
      void notify('error', fromTemplate(vscode.l10n.t('MCP Host: "{0}" is not running.'), this.host.shown(server.name)));
      return undefined;
    }
    const gate = this.host.gate.serverFor(server, 'person');
    const args: Record<string, string> = {};
    const list = prompt.arguments ?? [];
    for (const [i, a] of list.entries()) {
      const value = await askWithCompletion({
        client,
        gate,
        ref: { type: 'ref/prompt', name: prompt.name },
        argument: a.name,
        title: `${server.name} › ${prompt.name} (${i + 1}/${list.length})`,
        prompt: `${a.required ? vscode.l10n.t('{0} (required)', a.name) : vscode.l10n.t('{0} (optional)', a.name)}${a.description ? `: ${a.description}` : ''}`,
        required: !!a.required,
        context: args,
        log: (message) => server.log('warning', message),
        redact: (text) => this.host.redact(text),
      });
      if (value === undefined) return undefined;
      if (value !== '') args[a.name] = value;
    }
    try {
      const gated = await gate.getPrompt(prompt.name, args);
      // The fence's refusal is told by the gate; the person's own Cancel needs no word.
      if (!gated.sent) return undefined;
      const result = gated.result;
      const rendered = renderPrompt(prompt.name, args, result, (uri, name, mime) => toResourceUri(server.name, uri, name, mime).toString());
      const uri = this.docs.put('prompts', `${prompt.name}.md`, maskedForPerson(rendered.markdown), rendered.attachments);
      this.texts.set(uri.toString(), maskedForPerson(promptText(result)));
      await showDocument(uri, { preview: false });
      return uri;
    } catch (error) {
      void notify(
        'error',
        fromTemplate(
          vscode.l10n.t('MCP Host: prompt {0} failed: {1}'),
          this.host.shown(prompt.name),
          this.host.shown(McpError.from(error).toString()),
        ),
      );
      return undefined;
    }
  }

  /** Copies the prompt's messages as plain text. */
  async copy(uri?: vscode.Uri): Promise<void> {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    const text = target && (this.texts.get(target.toString()) ?? this.docs.text(target));
    if (!text) return;
    await vscode.env.clipboard.writeText(text);
    showStatusMessage(fromTemplate(vscode.l10n.t('MCP Host: prompt copied')), 3000);
  }

  private async pick(): Promise<{ server: ServerHandle; prompt: Prompt } | undefined> {
    const items = await promptPickItems(this.host, this.host.servers);
    if (!items.length) {
      void notify('info', fromTemplate(vscode.l10n.t('MCP Host: no running server offers prompts.')));
      return undefined;
    }
    return pickOne(items, {
      title: fromTemplate(vscode.l10n.t('MCP Host: Get Prompt')),
      placeHolder: fromTemplate(vscode.l10n.t('Which prompt?')),
      matchOnDescription: true,
      matchOnDetail: true,
    });
  }
}

/** The Get Prompt picker's items: every prompt of every running server, with its icon where the server gives one. */
export async function promptPickItems(
  host: McpHost,
  servers: readonly ServerHandle[],
): Promise<Array<ShownPickItem & { server: ServerHandle; prompt: Prompt }>> {
  const offered = servers.flatMap((server) => (server.client ? server.prompts.map((prompt) => ({ server, prompt })) : []));
  await warmIcons(offered.map(({ prompt }) => prompt.icons));
  return offered.map(({ server, prompt }) => ({
    label: host.shown(`${server.name} › ${titleAndName(prompt).label}`),
    iconPath: knownIcon(prompt.icons),
    description: host.shown(titleAndName(prompt).name ?? ''),
    detail: prompt.description === undefined ? undefined : host.shown(prompt.description),
    server,
    prompt,
  }));
}
