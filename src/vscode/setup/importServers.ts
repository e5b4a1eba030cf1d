import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as vscode from 'vscode';
import type { ServerLog } from '../logs/logs';
import {
  describeEntry,
  inputDefinitionsFor,
  knownImportSources,
  parseImportFile,
  planImport,
  type CollisionPolicy,
  type EntryCheck,
  type ImportCandidate,
  type ImportNote,
  type ImportPlan,
} from '../../core/servers/import';
import { forDisplay, fromTemplate, nothingToRedact, withIcon, type ShownText } from '../../core/render/shownText';
import type { McpHost } from '../host/host';
import { Settings } from '../common/ids';
import { addToSettings, askScope, configuredServers, scopeLabel } from './settingsTarget';
import type { SetupUi } from '../ui/setupUi';

/** What one import did, also written to the log; tests read it. */
export interface ImportReport {
  imported: string[];
  lines: string[];
}

interface FoundFile {
  label: string;
  path: string;
  candidates: ImportCandidate[];
  error?: string;
  /** A workspace folder's file: its servers belong in workspace settings by default. */
  inWorkspace: boolean;
  /** The file does not exist: not worth showing. */
  missing?: boolean;
}

/**
 * MCP Host: Import Servers... finds other clients' configurations (VS Code's `.vscode/mcp.json`,
 * Claude Desktop, Cursor, or a file the person picks), lets the person choose servers and a
 * scope, and writes them into settings. Every field that could not be carried over is reported.
 */
export async function importServers(host: McpHost, ui: SetupUi, log: ServerLog, check: EntryCheck): Promise<ImportReport | undefined> {
  const title = fromTemplate(vscode.l10n.t('Import MCP Servers'));
  // A configuration file's names, paths and problems, as a picker shows them.
  const display = (text: string) => forDisplay(text, nothingToRedact);
  const found = await findConfigurations(check);
  const workspaceSources = new Set(found.filter((f) => f.inWorkspace).map((f) => f.label));
  const chooseFile = {
    label: fromTemplate(vscode.l10n.t('$(folder-opened) Choose a JSON File...')),
    detail: fromTemplate(vscode.l10n.t('Any file with "mcpServers" (Claude Desktop, Cursor, ...) or "servers" (VS Code)')),
    file: undefined as FoundFile | undefined,
  };
  const all = found.flatMap((f) => f.candidates);
  const sourceItems = [
    ...(found.length > 1
      ? [
          {
            label: fromTemplate(vscode.l10n.t('$(list-flat) Everything Found')),
            description: serverCount(all.length),
            file: { label: '', path: '', candidates: all, inWorkspace: found.some((f) => f.inWorkspace) } as FoundFile,
          },
        ]
      : []),
    ...found.map((f) => ({
      label: display(f.label),
      description: f.error ? fromTemplate(vscode.l10n.t('unreadable: {0}'), display(f.error)) : serverCount(f.candidates.length),
      detail: display(f.path),
      file: f,
    })),
    chooseFile,
  ];
  const source = await ui.pick('source', sourceItems, {
    title,
    placeHolder: found.length
      ? fromTemplate(vscode.l10n.t('Import from where?'))
      : fromTemplate(vscode.l10n.t('No MCP configuration of another client was found. Choose a file?')),
  });
  if (!source) return undefined;
  let file = source.file;
  if (!file) {
    const uri = await ui.openJsonFile();
    if (!uri) return undefined;
    file = await readConfiguration(uri.fsPath, uri.fsPath, false, check);
  }
  if (file.error || !file.candidates.length) {
    void ui.notify(
      'warning',
      fromTemplate(
        vscode.l10n.t('MCP Host: nothing to import from {0}: {1}'),
        forDisplay(file.path || file.label, nothingToRedact),
        file.error === undefined ? fromTemplate(vscode.l10n.t('it defines no servers')) : forDisplay(file.error, nothingToRedact),
      ),
    );
    return undefined;
  }

  const serverItems = file.candidates.map((c) => ({
    label: c.problem ? withIcon('error', display(c.name)) : display(c.name),
    description: display(c.source),
    detail: c.problem
      ? fromTemplate(vscode.l10n.t('cannot be imported: {0}'), display(c.problem))
      : display([describeEntry(c.entry), ...c.notes.map(shortNote)].join(' · ')),
    picked: !c.problem,
    candidate: c,
  }));
  const picked = await ui.pickMany('servers', serverItems, { title, placeHolder: fromTemplate(vscode.l10n.t('Which servers?')) });
  if (!picked?.length) return undefined;
  const unusable = picked.filter((p) => p.candidate.problem);
  const chosen = picked.filter((p) => !p.candidate.problem).map((p) => p.candidate);

  const existing = configuredServers();
  const taken = chosen.filter((c, i) => c.name in existing || chosen.findIndex((o) => o.name === c.name) < i);
  let policy: CollisionPolicy = 'rename';
  if (taken.length) {
    const answer = await ui.pick(
      'collision',
      [
        {
          label: fromTemplate(vscode.l10n.t('Rename')),
          detail: fromTemplate(vscode.l10n.t('Import them as name-2, name-3, ...')),
          policy: 'rename' as CollisionPolicy,
        },
        {
          label: fromTemplate(vscode.l10n.t('Skip')),
          detail: fromTemplate(vscode.l10n.t('Keep the servers you have and leave these out')),
          policy: 'skip' as CollisionPolicy,
        },
      ],
      {
        title,
        placeHolder: fromTemplate(vscode.l10n.t('These names are taken: {0}'), display([...new Set(taken.map((c) => c.name))].join(', '))),
      },
    );
    if (!answer) return undefined;
    policy = answer.policy;
  }
  const target = await askScope(ui, title, file.inWorkspace);
  if (target === undefined) return undefined;

  const plan = planImport(chosen, existing, policy);
  const importedCandidates = chosen.filter((c) => !plan.skipped.some((k) => k.name === c.name && k.source === c.source));
  // Inputs first, so a server that starts as soon as it is written already finds its prompt.
  const inputs = inputDefinitionsFor(
    importedCandidates,
    vscode.workspace.getConfiguration(Settings.section).get<Record<string, unknown>>(Settings.inputs, {}),
  );
  if (Object.keys(inputs).length) await addToSettings(inputs, target, Settings.inputs);
  if (Object.keys(plan.entries).length) await addToSettings(plan.entries, target);

  const imported = Object.keys(plan.entries);
  const { lines, dropped } = describeImport({
    plan,
    imported: importedCandidates,
    unusable: unusable.map((u) => u.candidate),
    inputs,
    target,
    workspaceSources,
  });
  for (const line of lines) log.info(`[import] ${line}`);

  await host.reload();
  const trouble = dropped > 0 || unusable.length > 0 || plan.skipped.length > 0 || plan.renamed.length > 0;
  const message = trouble
    ? fromTemplate(
        vscode.l10n.t(
          'MCP Host: imported {0} into {1}. Some fields or servers were not carried over as they were; the log lists each one.',
        ),
        serverCount(imported.length),
        scopeLabel(target),
      )
    : fromTemplate(vscode.l10n.t('MCP Host: imported {0} into {1}.'), serverCount(imported.length), scopeLabel(target));
  const showLog = vscode.l10n.t('Show Log');
  void ui.notify(trouble ? 'warning' : 'info', message, showLog).then((pick) => pick === showLog && log.show(true));
  return { imported, lines };
}

/** The report, one line per decision and per note, each naming the server and its source. */
function describeImport(done: {
  plan: ImportPlan;
  imported: ImportCandidate[];
  unusable: ImportCandidate[];
  inputs: Record<string, unknown>;
  target: vscode.ConfigurationTarget;
  workspaceSources: Set<string>;
}): { lines: string[]; dropped: number } {
  const { plan, target } = done;
  const lines = [
    vscode.l10n.t('Imported into {0}: {1}', scopeLabel(target), Object.keys(plan.entries).join(', ') || vscode.l10n.t('nothing')),
  ];
  for (const r of plan.renamed)
    lines.push(vscode.l10n.t('"{0}" from {1} is imported as "{2}": the name was taken', r.from, r.source, r.to));
  for (const s of plan.skipped) {
    lines.push(
      s.reason === 'identical'
        ? vscode.l10n.t('"{0}" from {1} is skipped: the same server is configured already', s.name, s.source)
        : vscode.l10n.t('"{0}" from {1} is skipped: the name is taken', s.name, s.source),
    );
  }
  for (const u of done.unusable) lines.push(vscode.l10n.t('"{0}" from {1} is not imported: {2}', u.name, u.source, u.problem ?? ''));
  const inputIds = Object.keys(done.inputs);
  if (inputIds.length)
    lines.push(
      vscode.l10n.t(
        'How to ask for {0} is written to {1} in {2}',
        inputIds.join(', '),
        `${Settings.section}.${Settings.inputs}`,
        scopeLabel(target),
      ),
    );
  let dropped = 0;
  for (const c of done.imported) {
    const name = plan.renamed.find((r) => r.from === c.name && r.source === c.source)?.to ?? c.name;
    for (const note of c.notes) {
      if (note.kind === 'dropped') dropped++;
      lines.push(`${name} (${c.source}): ${longNote(note)}`);
    }
    // In a folder's mcp.json it meant that folder; in user settings, the first folder of any window.
    if (
      target === vscode.ConfigurationTarget.Global &&
      done.workspaceSources.has(c.source) &&
      JSON.stringify(c.entry).includes('${workspaceFolder}')
    ) {
      lines.push(
        `${name} (${c.source}): ${vscode.l10n.t('uses {0}, which in user settings means the first folder of whichever workspace is open', '${workspaceFolder}')}`,
      );
    }
  }
  return { lines, dropped };
}

async function findConfigurations(check: EntryCheck): Promise<FoundFile[]> {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => ({ name: f.name, path: f.uri.fsPath }));
  const sources = knownImportSources({
    platform: process.platform,
    home: os.homedir(),
    appData: process.env.APPDATA,
    xdgConfigHome: process.env.XDG_CONFIG_HOME,
    folders,
  });
  const files = await Promise.all(
    sources.map((s) =>
      readConfiguration(
        s.label,
        s.path,
        folders.some((f) => s.path.startsWith(f.path)),
        check,
      ),
    ),
  );
  return files.filter((f) => !f.missing);
}

async function readConfiguration(label: string, file: string, inWorkspace: boolean, check: EntryCheck): Promise<FoundFile> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
    return { label, path: file, candidates: [], error: (e as Error).message, inWorkspace, missing };
  }
  const parsed = parseImportFile(text, label, check);
  return { label, path: file, candidates: parsed.candidates, error: parsed.error, inWorkspace };
}

function serverCount(n: number): ShownText {
  return n === 1 ? fromTemplate(vscode.l10n.t('1 server')) : fromTemplate(vscode.l10n.t('{0} servers'), n);
}

function shortNote(note: ImportNote): string {
  switch (note.kind) {
    case 'dropped':
      return vscode.l10n.t('drops "{0}"', note.field);
    case 'input':
      return vscode.l10n.t('asks for {0}', `\${input:${note.id}}`);
    case 'variable':
      return vscode.l10n.t('{0} unsupported', note.variable);
    case 'sse':
      return vscode.l10n.t('SSE as HTTP');
    case 'renamed':
      return vscode.l10n.t('renamed from "{0}"', note.from);
  }
}

function longNote(note: ImportNote): string {
  switch (note.kind) {
    case 'dropped':
      return vscode.l10n.t('the field "{0}" is not imported: MCP Host has no such setting', note.field);
    case 'input': {
      const parts = [
        vscode.l10n.t(
          '{0}{1} is asked for when the server first starts and kept in the secret storage',
          `\${input:${note.id}}`,
          note.description ? ` ("${note.description}")` : '',
        ),
      ];
      if (note.inputType === 'pickString' && note.options?.length)
        parts.push(vscode.l10n.t('type the value; VS Code offered: {0}', note.options.join(', ')));
      else if (note.inputType !== 'promptString')
        parts.push(vscode.l10n.t('VS Code filled it with a "{0}" input; MCP Host asks you instead', note.inputType));
      if (note.defaultValue !== undefined && note.inputType !== 'promptString')
        parts.push(vscode.l10n.t('its default "{0}" is not carried over', note.defaultValue));
      return parts.join('; ');
    }
    case 'variable':
      return vscode.l10n.t('{0} is not a variable MCP Host resolves: edit it before the server starts', note.variable);
    case 'sse':
      return vscode.l10n.t('type "sse" is imported as "http": MCP Host detects the older HTTP+SSE transport from the URL');
    case 'renamed':
      return vscode.l10n.t('renamed from "{0}": a server name cannot contain / or \\', note.from);
  }
}
