import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import type { ReuseAnswer } from '../common/answers';
import * as os from 'node:os';
import {
  decodeStoredInput,
  definitionIdentity,
  encodeStoredInput,
  forDisplay,
  fromTemplate,
  McpError,
  Redactor,
  resolveVariables,
  secretValuesOf,
  type InputDefinition,
  type Redact,
  type ServerDefinition,
} from '../../core';
import { inputDefinitionFor } from '../common/settings';
import { askModal } from '../window/notifications';
import type { HostUi } from '../ui/hostUi';
import { askText } from '../window/windowInputs';

/** What every log and trace writer, and every message shown to the person, asks before writing. */
export interface Redaction {
  redact(text: string): string;
}

/**
 * Everything secret in one place: resolving a definition's `${…}` variables, asking for
 * `${input:ID}` values, keeping them in the secret storage with the definition they were given to
 * (and handing that storage to OAuth for its tokens), and the one Redactor that every log and
 * trace writer and every error shown asks through `redact`.
 *
 * `mcpHost.input.<ID>` holds the value, the definition that first asked (scope, workspace or
 * folder, name) and the definitions the person let use it too. Another definition asks first:
 * Allow (remembered), Enter a New Value (kept for that definition only, under
 * `mcpHost.input.<ID>@<hash>`), or Cancel (the server does not start).
 */
export class Secrets implements Redaction {
  private readonly redactor = new Redactor();

  constructor(
    /** Also where OAuth keeps its tokens (`../auth/oauth.ts`). */
    readonly storage: vscode.SecretStorage,
    private readonly ui: HostUi,
  ) {}

  /**
   * `def` with its `${…}` variables resolved for `workspaceFolder`; each `${input:}` is asked for
   * through `ask` (which lets the host show the server as waiting), and every secret value it
   * resolved to joins the redactor before the definition goes anywhere.
   */
  async resolve(
    def: ServerDefinition,
    workspaceFolder: string | undefined,
    ask: (question: () => Promise<string>) => Promise<string>,
    signal?: AbortSignal,
  ): Promise<ServerDefinition> {
    const resolved = await resolveVariables(def, {
      workspaceFolder,
      userHome: os.homedir(),
      env: process.env,
      input: (id) => ask(() => this.input(def, id, signal)),
    });
    for (const v of secretValuesOf(def, resolved, process.env)) this.redactor.add(v);
    return resolved;
  }

  /** Servers starting together ask for one ID one after the other, so the first answer is kept. */
  private readonly queues = new Map<string, Promise<unknown>>();

  /** The value of `${input:id}` for `def`, asked for or reused only as described above. */
  private input(def: ServerDefinition, id: string, signal: AbortSignal | undefined): Promise<string> {
    const run = (this.queues.get(id) ?? Promise.resolve()).catch(() => undefined).then(() => this.inputNow(def, id, signal));
    this.queues.set(id, run);
    void run.finally(() => this.queues.get(id) === run && this.queues.delete(id)).catch(() => undefined);
    return run;
  }

  private async inputNow(def: ServerDefinition, id: string, signal: AbortSignal | undefined): Promise<string> {
    const me = identityOf(def);
    const sharedKey = `mcpHost.input.${id}`;
    const ownKey = `${sharedKey}@${createHash('sha256').update(me).digest('hex').slice(0, 16)}`;
    const own = await this.storage.get(ownKey);
    if (own !== undefined) return this.known(own);
    const raw = await this.storage.get(sharedKey);
    if (raw === undefined) {
      const value = await this.ask(def, id, signal);
      await this.storage.store(sharedKey, encodeStoredInput({ value, owner: me, ownerLabel: labelOf(def), allowed: [] }));
      return this.known(value);
    }
    const stored = decodeStoredInput(raw);
    if (stored.owner === me || stored.allowed.includes(me)) return this.known(stored.value);
    // A bare value from before owners were kept was given for some server of the person's own:
    // their user servers adopt it; a workspace's server asks like any other.
    if (stored.owner === undefined && def.origin.scope === 'user') {
      await this.storage.store(sharedKey, encodeStoredInput({ ...stored, owner: me, ownerLabel: labelOf(def) }));
      return this.known(stored.value);
    }
    this.redactor.add(stored.value);
    const answer = await this.ui.allowInputReuse(
      def.name,
      id,
      stored.ownerLabel ?? vscode.l10n.t('a server, before MCP Host kept track of who asked'),
    );
    if (answer === 'allow') {
      await this.storage.store(sharedKey, encodeStoredInput({ ...stored, allowed: [...stored.allowed, me] }));
      return this.known(stored.value);
    }
    if (answer === 'cancel')
      throw McpError.invalidRequest(
        vscode.l10n.t('{0}: the value stored for {1} was not allowed for this server', def.name, `\${input:${id}}`),
      );
    const value = await this.ask(def, id, signal);
    await this.storage.store(ownKey, value);
    return this.known(value);
  }

  redact(text: string): string {
    return this.redactor.redact(text);
  }

  /**
   * Asks the person for `${input:id}`. The input box closes when `signal` aborts (its start was
   * abandoned: the server stopped or removed, or its definition changed); a question queued behind
   * another server's is not shown at all then. Either way no value is given.
   */
  private async ask(def: ServerDefinition, id: string, signal: AbortSignal | undefined): Promise<string> {
    const abandoned = new vscode.CancellationTokenSource();
    const cancel = () => abandoned.cancel();
    signal?.addEventListener('abort', cancel);
    try {
      const value = signal?.aborted ? undefined : await this.ui.askInput(id, inputDefinitionFor(def, id), abandoned.token);
      if (value === undefined) throw McpError.invalidRequest(vscode.l10n.t('no value given for {0}', `\${input:${id}}`));
      return value;
    } finally {
      signal?.removeEventListener('abort', cancel);
      abandoned.dispose();
    }
  }

  private known(value: string): string {
    this.redactor.add(value);
    return value;
  }
}

function identityOf(def: ServerDefinition): string {
  const workspace = vscode.workspace.workspaceFile?.toString() ?? vscode.workspace.workspaceFolders?.[0]?.uri.toString();
  return definitionIdentity(def, workspace);
}

function labelOf(def: ServerDefinition): string {
  switch (def.origin.scope) {
    case 'user':
      return vscode.l10n.t('"{0}" in your user settings', def.name);
    case 'workspace':
      return vscode.l10n.t('"{0}" in the settings of the workspace {1}', def.name, vscode.workspace.name ?? '');
    case 'folder':
      return vscode.l10n.t(
        '"{0}" in the settings of the folder {1}',
        def.name,
        def.origin.folderUri ? (vscode.Uri.parse(def.origin.folderUri).path.split('/').pop() ?? '') : '',
      );
  }
}

/** The default `HostUi.askInput`. */
export function askWithInputBox(
  id: string,
  definition: InputDefinition | undefined,
  token?: vscode.CancellationToken,
): Promise<string | undefined> {
  return Promise.resolve(
    askText(
      {
        title: vscode.l10n.t('MCP Host: value for {0}', `\${input:${id}}`),
        prompt: definition?.description
          ? vscode.l10n.t('{0} (kept in the secret storage)', definition.description)
          : vscode.l10n.t('Stored in the editor’s secret storage'),
        value: definition?.default,
        password: definition?.password !== false,
        ignoreFocusOut: true,
      },
      token,
    ),
  );
}

/** The default `HostUi.allowInputReuse`. */
export async function askToReuse(server: string, id: string, firstGivenTo: string, redact: Redact): Promise<ReuseAnswer> {
  const allow = vscode.l10n.t('Allow');
  const enter = vscode.l10n.t('Enter a New Value');
  const name = forDisplay(server, redact);
  const pick = await askModal(
    'warning',
    fromTemplate(vscode.l10n.t('The MCP server "{0}" wants the value you stored for {1}'), name, forDisplay(`\${input:${id}}`, redact)),
    fromTemplate(
      vscode.l10n.t(
        'That value was first given to {0}. Allow sends it to "{1}" too (remembered); Enter a New Value keeps a separate value for "{1}".',
      ),
      forDisplay(firstGivenTo, redact),
      name,
    ),
    allow,
    enter,
  );
  return pick === allow ? 'allow' : pick === enter ? 'new' : 'cancel';
}
