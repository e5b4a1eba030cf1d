import * as vscode from 'vscode';
// From their own modules, not the core's index: this file is in the lazy dist/setup.js (see ./lazy.ts).
import { McpError } from '../../core/protocol/errors';
import { fromTemplate, type ShownText } from '../../core/render/shownText';
import { suggestServerName, type NewServerKind } from '../../core/servers/naming';
import { splitCommandLine } from '../../core/transport/commandLine';
import type { McpHost } from '../host/host';
import { Commands } from '../common/ids';
import { addToSettings, askScope, configuredServers, scopeLabel } from './settingsTarget';
import type { SetupUi } from '../ui/setupUi';

type Kind = NewServerKind;

/** An npm package name (lower case), optionally with a version or tag: `pkg`, `@scope/pkg`, `pkg@1.2`. */
const NPM_PACKAGE = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9~][a-z0-9._~-]*(@[\w.^~<>=*-]+)?$/;

/**
 * MCP Host: Add Server... asks how the server is reached (a command, an npm package or a URL),
 * a name and a scope, writes the entry with `WorkspaceConfiguration.update` and starts it.
 * Returns the name it added.
 */
export async function addServer(host: McpHost, ui: SetupUi): Promise<string | undefined> {
  const title = (step: number) => fromTemplate(vscode.l10n.t('Add MCP Server ({0}/4)'), step);
  const chosen = await ui.pick(
    'kind',
    [
      {
        label: fromTemplate(vscode.l10n.t('$(terminal) Command (stdio)')),
        detail: fromTemplate(vscode.l10n.t('Runs a local program, e.g. node server.js or uvx mcp-server-git')),
        way: 'stdio' as Kind,
      },
      {
        label: fromTemplate(vscode.l10n.t('$(package) npm Package')),
        detail: fromTemplate(vscode.l10n.t('Runs a package from the npm registry with npx, e.g. @modelcontextprotocol/server-everything')),
        way: 'npm' as Kind,
      },
      {
        label: fromTemplate(vscode.l10n.t('$(globe) HTTP URL')),
        detail: fromTemplate(vscode.l10n.t('Connects to a remote server (Streamable HTTP or HTTP+SSE)')),
        way: 'http' as Kind,
      },
    ],
    { title: title(1), placeHolder: fromTemplate(vscode.l10n.t('How is the server reached?')) },
  );
  if (!chosen) return undefined;
  const kind = chosen.way;

  const raw = await ui.input('target', { title: title(2), ...targetQuestion(kind) });
  if (raw === undefined) return undefined;
  const entry = entryFor(kind, raw.trim());

  const existing = configuredServers();
  const name = await ui.input('name', {
    title: title(3),
    prompt: vscode.l10n.t('A name for the server, unique among your MCP servers'),
    value: uniqueName(suggestServerName(kind, raw.trim()), existing),
    validateInput: (v) => validateName(v, existing),
  });
  if (name === undefined) return undefined;

  const target = await askScope(ui, title(4));
  if (target === undefined) return undefined;
  await addToSettings({ [name.trim()]: entry }, target);
  await startAdded(host, ui, name.trim(), scopeLabel(target));
  return name.trim();
}

function targetQuestion(kind: Kind): vscode.InputBoxOptions {
  switch (kind) {
    case 'stdio':
      return {
        prompt: vscode.l10n.t('The command line that starts the server'),
        placeHolder: 'node server.js --stdio',
        validateInput: (v) => {
          const line = wordsOf(v);
          return 'error' in line ? line.error : line.words.length ? undefined : vscode.l10n.t('Enter a command line');
        },
      };
    case 'npm':
      return {
        prompt: vscode.l10n.t('The npm package, then any arguments; it runs with npx -y'),
        placeHolder: '@modelcontextprotocol/server-everything',
        validateInput: (v) => {
          const line = wordsOf(v);
          if ('error' in line) return line.error;
          return line.words[0] && NPM_PACKAGE.test(line.words[0])
            ? undefined
            : vscode.l10n.t('Enter an npm package name such as @scope/name or name@version');
        },
      };
    case 'http':
      return {
        prompt: vscode.l10n.t('The server URL'),
        placeHolder: 'https://example.com/mcp',
        validateInput: (v) =>
          /^https?:\/\/[^\s/]+\S*$/.test(v.trim()) && URL.canParse(v.trim())
            ? undefined
            : vscode.l10n.t('Enter an http:// or https:// URL'),
      };
  }
}

/** The words of a command line, or why it cannot be split (an unterminated quote). */
function wordsOf(line: string): { words: string[] } | { error: string } {
  try {
    return { words: splitCommandLine(line) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

export function entryFor(kind: Kind, value: string): Record<string, unknown> {
  if (kind === 'http') return { type: 'http', url: value };
  const words = splitCommandLine(value);
  if (kind === 'npm') return { command: 'npx', args: ['-y', ...words] };
  return { command: words[0], args: words.slice(1) };
}

function uniqueName(base: string, existing: Record<string, unknown>): string {
  if (!(base in existing)) return base;
  let n = 2;
  while (`${base}-${n}` in existing) n++;
  return `${base}-${n}`;
}

function validateName(value: string, existing: Record<string, unknown>): string | undefined {
  const name = value.trim();
  if (!name) return vscode.l10n.t('Enter a name');
  if (/[/\\]/.test(name)) return vscode.l10n.t('A name cannot contain / or \\');
  if (name in existing) return vscode.l10n.t('A server named "{0}" exists already', name);
  return undefined;
}

/** Applies the settings now (not when the change event arrives) and starts the new server. */
async function startAdded(host: McpHost, ui: SetupUi, name: string, where: ShownText): Promise<void> {
  await host.reload();
  const server = host.registry.get(name);
  const shownName = host.shown(name);
  if (!server) {
    const diagnostic = host.diagnostics.find((d) => d.name === name)?.message;
    const reason = diagnostic === undefined ? fromTemplate(vscode.l10n.t('it is not in the settings')) : host.shown(diagnostic);
    void ui.notify(
      'warning',
      fromTemplate(vscode.l10n.t('MCP Host: "{0}" was added to {1} but not started: {2}'), shownName, where, reason),
    );
    return;
  }
  // The reload asked for its start without waiting for it: start() joins that start (or makes one, when it waits to be started); a failure is in its state already.
  let failure = server.state.kind === 'error' ? server.state.message : undefined;
  if (failure === undefined) await server.start().catch((e) => (failure = McpError.from(e).message));
  if (failure === undefined) {
    void ui.notify('info', fromTemplate(vscode.l10n.t('MCP Host: "{0}" was added to {1} and is running.'), shownName, where));
    return;
  }
  const showLog = vscode.l10n.t('Show Log');
  // The failure is the server's text (an initialize error, a stderr tail, an HTTP body).
  const pick = await ui.notify(
    'error',
    fromTemplate(vscode.l10n.t('MCP Host: "{0}" was added to {1} but could not start: {2}'), shownName, where, host.shown(failure)),
    showLog,
  );
  if (pick === showLog) await vscode.commands.executeCommand(Commands.showServerLog, name);
}
