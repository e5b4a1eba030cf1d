/**
 * MCP Host: Connect an Agent… and Disconnect an Agent…: the person picks an agent, the scope
 * (project or user) where it has a choice, and the servers to give it; MCP Host writes one entry,
 * `mcp-host`, into that agent's own file, running its launcher (../../core/agents/rendezvous.ts),
 * and keeps which servers that entry is given (./agents.ts). Disconnect takes exactly that entry
 * out again and nothing else of the file. JSON files are edited in place (../../core/agents/
 * jsonEntry.ts), Codex's TOML by a block MCP Host marks (../../core/agents/tomlEntry.ts). Loaded on
 * the first of those commands (dist/agents.js).
 */
import { promises as fs } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { forDisplay, fromTemplate, type ShownText } from '../../core';
import { addEntry, EntryFileError, hasContainer, readEntry, removeEntry } from '../../core/agents/jsonEntry';
import { launcherPath } from '../../core/agents/rendezvous';
import {
  AGENTS,
  ENTRY_NAME,
  entryValue,
  targetFile,
  targetLabel,
  targetsOf,
  type AgentId,
  type AgentTarget,
} from '../../core/agents/targets';
import { addTomlEntry, readTomlEntry, removeTomlEntry } from '../../core/agents/tomlEntry';
import type { McpHost } from '../host/host';
import type { SetupUi } from '../ui/setupUi';
import type { AgentEntries, AgentEntry } from './entries';

const plain = (text: string): ShownText => forDisplay(text, (t) => t);

function whereOf(target: AgentTarget): string | undefined {
  return targetFile(target, { folder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath, home: homedir(), env: process.env });
}

/** Whether an entry in a file is MCP Host's: it runs MCP Host's launcher. */
function isOurs(value: unknown): boolean {
  const command = (value as { command?: unknown } | undefined)?.command;
  return typeof command === 'string' && path.basename(command).startsWith(path.basename(launcherPath(homedir())).replace(/\.cmd$/, ''));
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Connect an Agent…; resolves with the target connected, or undefined when the person stopped. */
export async function connectAgent(host: McpHost, agents: AgentEntries, ui: SetupUi): Promise<AgentTarget | undefined> {
  const agent = await ui.pick(
    'agent',
    AGENTS.map((a) => ({ label: plain(a.label), id: a.id })),
    { title: fromTemplate(vscode.l10n.t('MCP Host: Connect an Agent')), placeHolder: fromTemplate(vscode.l10n.t('Which agent?')) },
  );
  if (!agent) return undefined;
  const choices = targetsOf(agent.id as AgentId).filter((t) => whereOf(t) !== undefined);
  if (!choices.length) {
    await ui.notify(
      'warning',
      fromTemplate(vscode.l10n.t('MCP Host: {0} reads its MCP servers from a project: open a folder first.'), agent.label),
    );
    return undefined;
  }
  const target =
    choices.length === 1
      ? choices[0]
      : (
          await ui.pick(
            'scope',
            choices.map((t) => ({
              label: t.scope === 'project' ? fromTemplate(vscode.l10n.t('Project')) : fromTemplate(vscode.l10n.t('User')),
              description: plain(whereOf(t)!),
              target: t,
            })),
            {
              title: fromTemplate(vscode.l10n.t('MCP Host: Connect {0}'), agent.label),
              placeHolder: fromTemplate(vscode.l10n.t('Where?')),
            },
          )
        )?.target;
  if (!target) return undefined;
  const current = agents.entryOf(target);
  const servers = host.servers.filter((s) => s.definition.enabled);
  if (!servers.length) {
    await ui.notify('warning', fromTemplate(vscode.l10n.t('MCP Host: there is no enabled server to give an agent.')));
    return undefined;
  }
  const picked = await ui.pickMany(
    'servers',
    servers.map((s) => ({ label: host.shown(s.name), name: s.name, picked: current ? current.servers.includes(s.name) : true })),
    {
      title: fromTemplate(vscode.l10n.t('MCP Host: Connect {0}'), agent.label),
      placeHolder: fromTemplate(vscode.l10n.t('The servers {0} may use, through your policy'), agent.label),
    },
  );
  if (!picked?.length) return undefined;
  const file = whereOf(target)!;
  let entry: AgentEntry;
  try {
    entry = { ...(await writeEntry(target, file, await agents.launcher())), servers: picked.map((p) => p.name) };
  } catch (error) {
    await ui.notify(
      'error',
      fromTemplate(
        vscode.l10n.t('MCP Host: could not write {0}: {1}'),
        plain(file),
        host.shown(error instanceof Error ? error.message : String(error)),
      ),
    );
    return undefined;
  }
  await agents.setEntry(target, current ? { ...entry, made: current.made } : entry);
  await ui.notify(
    'info',
    fromTemplate(
      vscode.l10n.t('MCP Host: {0} now reaches {1} through your policy, as the MCP server "{2}" in {3}. {4}'),
      plain(targetLabel(target)),
      host.shown(picked.map((p) => p.name).join(', ')),
      plain(ENTRY_NAME),
      plain(file),
      nextStep(target),
    ),
  );
  return target;
}

/** What the agent itself still wants before it starts the entry. */
function nextStep(target: AgentTarget): ShownText {
  switch (target.id) {
    case 'mcp-json':
      return fromTemplate(
        vscode.l10n.t("Claude Code asks once before it starts a project's servers; Copilot CLI reads it only with --trust-folder."),
      );
    case 'gemini-project':
      return fromTemplate(vscode.l10n.t('Gemini CLI reads it only in a trusted folder.'));
    default:
      return fromTemplate(vscode.l10n.t('Restart the agent to see it.'));
  }
}

/** Writes the entry (or finds it written); what MCP Host made in the file. */
async function writeEntry(target: AgentTarget, file: string, launcher: string): Promise<Omit<AgentEntry, 'servers'>> {
  const text = await readText(file);
  const value = entryValue(target, launcher);
  if (target.format === 'toml') {
    const existing = text === undefined ? undefined : readTomlEntry(text, ENTRY_NAME);
    if (existing !== undefined && !isOurs(existing))
      throw new EntryFileError(`it already has a server named "${ENTRY_NAME}" that MCP Host did not write`);
    if (existing !== undefined) return { file };
    await write(file, addTomlEntry(text ?? '', ENTRY_NAME, value as { command: string; args: string[] }));
    return { file, made: { createdFile: text === undefined } };
  }
  const existing = text === undefined ? undefined : readEntry(text, ENTRY_NAME).value;
  if (existing !== undefined && !isOurs(existing))
    throw new EntryFileError(`it already has a server named "${ENTRY_NAME}" that MCP Host did not write`);
  if (existing !== undefined) return { file };
  const hadContainer = text !== undefined && hasContainer(text);
  await write(file, addEntry(text ?? '', ENTRY_NAME, value));
  return { file, made: { createdFile: text === undefined, addedContainer: text !== undefined && !hadContainer } };
}

async function write(file: string, text: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, text);
}

/** Disconnect an Agent…: the entry out of its file, and the servers it was given forgotten. */
export async function disconnectAgent(host: McpHost, agents: AgentEntries, ui: SetupUi): Promise<AgentTarget | undefined> {
  const connected = agents.entries();
  if (!connected.length) {
    await ui.notify('info', fromTemplate(vscode.l10n.t('MCP Host: no agent is connected.')));
    return undefined;
  }
  const choice = await ui.pick(
    'connection',
    connected.map(({ target, entry }) => ({
      label: plain(targetLabel(target)),
      description: plain(entry.file),
      detail: host.shown(entry.servers.join(', ')),
      target,
      entry,
    })),
    { title: fromTemplate(vscode.l10n.t('MCP Host: Disconnect an Agent')) },
  );
  if (!choice) return undefined;
  const { target, entry } = choice;
  try {
    const text = await readText(entry.file);
    if (text !== undefined) {
      const out = target.format === 'toml' ? removeTomlEntry(text, ENTRY_NAME) : removeEntry(text, ENTRY_NAME, entry.made ?? {});
      if (out === '' && entry.made?.createdFile) await fs.unlink(entry.file);
      else if (out !== text) await fs.writeFile(entry.file, out);
    }
  } catch (error) {
    await ui.notify(
      'error',
      fromTemplate(
        vscode.l10n.t('MCP Host: could not edit {0}: {1}'),
        plain(entry.file),
        host.shown(error instanceof Error ? error.message : String(error)),
      ),
    );
    return undefined;
  }
  await agents.setEntry(target, undefined);
  await ui.notify(
    'info',
    fromTemplate(
      vscode.l10n.t('MCP Host: {0} is disconnected; "{1}" is no longer in {2}.'),
      plain(targetLabel(target)),
      plain(ENTRY_NAME),
      plain(entry.file),
    ),
  );
  return target;
}
