/**
 * The editor's pins (../core/policy/pins.ts): per server identity (the key of the "always"
 * answers), the definition of each tool and prompt as it was when the person first used or
 * approved it. A definition that differs now is suspended until the person reviews the change
 * (old beside new in VS Code's diff editor) and accepts it. Kept in the global state, like the
 * "always" answers; a grant (sandbox, policy) accepted later does not touch them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { stableStringify } from '../../core/protocol/stableStringify';
import {
  compareOne,
  definitionRecord,
  pinInstructions,
  pinListed,
  pinOf,
  pinPrompt,
  pinTool,
  type Pinned,
  type PinStatus,
} from '../../core/policy/pins';
import { readPolicyFileSync, writePolicyFile } from '../../core/files/policyFile';
import { auditedServer } from '../../core/policy/serverRequests';
import type { AuditSink } from '../../core/policy/types';
import type { Prompt, ServerDefinition, ServerHandle, Tool } from '../../core';
import { serverIdentity, type PinKind } from './gate';
import { WorkspaceLockFiles } from './lockFiles';
import { SerialQueue } from '../../core';
import { invisibleMarked } from '../../core/scan/invisible';
import { flaggedMember, isFlaggedMember, scanInstructions, scanPrompt, scanTool, type ScanFinding } from '../../core/scan/detectors';

/** The pins' file in the extension's global storage. */
const PINS_FILE = 'pinned-definitions.json';
/** The most of it that is read: a pin is a few KB, and this holds tens of thousands. */
const MAX_PINS_FILE_BYTES = 256 * 1024 * 1024;
/** What a lock file could not say: the definition is suspended, since a lock file only ever tightens. */
const NOT_IN_LOCK = 'absent from the workspace lock file';
const BAD_LOCK = 'the workspace lock file is unreadable';
/** What stands for a pin where there is none (a lock file that could not be read, a definition never pinned). */
const NO_PIN: Pinned = { sha256: '', definition: null };
/** The name a change of the instructions goes by. */
const INSTRUCTIONS = 'instructions';

/** The scheme of the review's read-only documents (old and new definition). */
export const PINNED_SCHEME = 'mcp-host-definition';

/** One stored pin: `identity \0 kind \0 name` and the definition with its hash. */
type StoredPin = [key: string, pinned: Pinned];

/** What a change is of: a tool, a prompt, or the server's instructions (then `name` is `instructions`). */
export type ChangeKind = PinKind | 'instructions';

/** A tool or prompt whose definition, or the instructions whose text, differs from its pin. */
export interface DefinitionChange {
  kind: ChangeKind;
  name: string;
  pinned: Pinned;
  now: Pinned;
  changed: string[];
  /** The workspace lock file that suspends it (then `pinned` is the lock's definition): accepting does not lift that. */
  lockFile?: string;
  /** The tool, prompt or instructions were flagged by the scan (../../core/scan/detectors.ts): what it found, which accepting it accepts. */
  findings?: readonly ScanFinding[];
}

/** The pin key under which the person's acceptance of a flagged definition is kept (tools' kept their first key). */
const FLAGGED_KEY = { tools: 'flagged', prompts: 'flagged-prompts', instructions: 'flagged-instructions' } as const;
type FlaggedKey = (typeof FLAGGED_KEY)[ChangeKind];

const pinOfItem = (kind: PinKind, item: Tool | Prompt): Pinned => (kind === 'tools' ? pinTool(item as Tool) : pinPrompt(item as Prompt));

/** The pin of what the server's listing says of the item's name: its own definition, or all of a name listed twice (`pinListed`). */
const listedPin = (handle: ServerHandle, kind: PinKind, item: Tool | Prompt): Pinned =>
  kind === 'tools' ? pinListed(item as Tool, handle.tools, pinTool) : pinListed(item as Prompt, handle.prompts, pinPrompt);

export class DefinitionPins implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  /** A pin was taken or accepted, or a change was found: the tree and the chat's list follow. */
  readonly onDidChange = this.emitter.event;
  /** Changes recorded in the audit in this window (key and new hash): each is recorded once. */
  private readonly noticed = new Set<string>();

  /** The workspace's lock files: one read, created or deleted makes the tree and the chat's list follow. */
  private readonly locks = new WorkspaceLockFiles();

  constructor(
    /** The extension's global storage folder: the pins live in a file of their own there (see `load`). */
    private readonly storage: string,
    private readonly audit: AuditSink,
    /** The tool names of the other running servers, for the scan's shadowing detector. */
    private readonly otherTools: (def: ServerDefinition) => ReadonlyMap<string, string> = () => new Map(),
  ) {
    this.pins = this.load();
    this.locks.onDidChange(() => this.emitter.fire());
  }

  /**
   * The pins, read once from their file and written back after each change. A file of their own, not
   * the global state: VS Code's Memento replaces its whole value when a storage event arrives, and a
   * late one would drop an "always" answer written beside a pin taken at the same moment.
   */
  private readonly pins: Map<string, Pinned>;
  private readonly writes = new SerialQueue();

  private get file(): string {
    return path.join(this.storage, PINS_FILE);
  }

  private load(): Map<string, Pinned> {
    try {
      return new Map(JSON.parse(readPolicyFileSync(this.file, MAX_PINS_FILE_BYTES)) as StoredPin[]);
    } catch {
      return new Map();
    }
  }

  /**
   * Sets the pins and writes the file, one write at a time: the file as it is now (another window may
   * have written it) with these entries over it, to a new file renamed over the old. A write that fails
   * is reported in the extension host's log; the pins stay in memory for this window.
   */
  private save(entries: readonly StoredPin[]): Promise<void> {
    for (const [key, pinned] of entries) this.pins.set(key, pinned);
    return this.writes.run(async () => {
      try {
        const merged = this.load();
        for (const [key, pinned] of entries) merged.set(key, pinned);
        for (const [key, pinned] of merged) if (!this.pins.has(key)) this.pins.set(key, pinned);
        await fs.promises.mkdir(this.storage, { recursive: true });
        const temporary = `${this.file}.${process.pid}.tmp`;
        await writePolicyFile(temporary, JSON.stringify([...merged]));
        await fs.promises.rename(temporary, this.file);
      } catch (e) {
        console.warn(`MCP Host: could not store the pinned definitions: ${String(e)}`);
      }
    });
  }

  dispose(): void {
    this.locks.dispose();
    this.emitter.dispose();
  }

  /** What the scan found in a tool or prompt as listed (each listing brings new objects, scanned once). */
  private readonly scanned = new WeakMap<Tool | Prompt, readonly ScanFinding[]>();

  /**
   * The scan's findings in a tool (or prompt) that the person has not accepted for this exact
   * definition: such a tool is suspended like a changed one (never auto-approved, never trusted as
   * read-only, withheld from the chat) until they review and accept it. `ownTools`: the server's own
   * tool names, which a prompt may name without shadowing anything.
   */
  flagged(def: ServerDefinition, item: Tool | Prompt, kind: PinKind = 'tools', ownTools?: readonly string[]): readonly ScanFinding[] {
    let findings = this.scanned.get(item);
    if (!findings) {
      const context = { otherTools: this.otherTools(def) };
      findings = kind === 'tools' ? scanTool(item as Tool, context) : scanPrompt(item as Prompt, context, ownTools);
      this.scanned.set(item, findings);
    }
    if (!findings.length) return findings;
    return this.pinned(def, FLAGGED_KEY[kind], item.name)?.sha256 === pinOfItem(kind, item).sha256 ? [] : findings;
  }

  /** What the scan found in a running server's instructions, unless the person accepted these exact instructions. */
  flaggedInstructions(handle: ServerHandle): readonly ScanFinding[] {
    const client = handle.client;
    if (!client?.instructions) return [];
    const def = handle.definition;
    const findings = scanInstructions(client.instructions, { otherTools: this.otherTools(def) }, ownToolNames(handle));
    if (!findings.length) return findings;
    return this.pinned(def, FLAGGED_KEY.instructions, INSTRUCTIONS)?.sha256 === pinInstructions(client.instructions).sha256 ? [] : findings;
  }

  private key(def: ServerDefinition, kind: ChangeKind | 'baseline' | 'scan' | FlaggedKey, name: string): string {
    return [serverIdentity(def), kind, name].join('\u0000');
  }

  private pinned(def: ServerDefinition, kind: ChangeKind | FlaggedKey, name: string): Pinned | undefined {
    const key = this.key(def, kind, name);
    return this.pins.get(key);
  }

  /**
   * How the tool or prompt as listed now compares with its pin: same, changed (and what), or new
   * (never pinned). A workspace lock file that differs makes it changed; one that agrees changes
   * nothing (it never stands for the person's approval). A name the server lists with several
   * definitions, or a definition with a number JSON cannot carry, is changed whatever was pinned.
   * The lock files as last read: a gated call makes them current first (`ready`).
   */
  status(handle: ServerHandle, kind: PinKind, item: Tool | Prompt): PinStatus {
    const now = listedPin(handle, kind, item);
    const locked = this.lockChange(handle.definition, kind, item.name, now);
    if (locked) return { status: 'changed', changed: locked.changed };
    const status = compareOne(this.pinned(handle.definition, kind, item.name), now);
    const flagged = status.status !== 'changed' ? this.flagged(handle.definition, item, kind, ownToolNames(handle)) : [];
    return flagged.length ? { status: 'changed', changed: flagged.map(flaggedMember) } : status;
  }

  /** The server's workspace lock files made current (read again where one changed), without blocking the extension host. */
  ready(def: ServerDefinition): Promise<void> {
    return this.locks.current(def);
  }

  /** How the workspace's lock files disagree with a definition, if one does: the lock's definition and what differs. */
  private lockChange(
    def: ServerDefinition,
    kind: PinKind,
    name: string,
    now: Pinned,
  ): { file: string; pinned: Pinned; changed: string[] } | undefined {
    // What cannot be pinned is suspended as such, whatever a lock file says.
    if (now.unpinnable) return undefined;
    for (const read of this.locks.readNow(def)) {
      if ('problem' in read) return { file: read.file, pinned: NO_PIN, changed: [`${BAD_LOCK}: ${read.problem}`] };
      const locked = pinOf(read.pins, kind, name);
      if (!locked) return { file: read.file, pinned: NO_PIN, changed: [NOT_IN_LOCK] };
      const status = compareOne(locked, now);
      if (status.status === 'changed') return { file: read.file, pinned: locked, changed: status.changed };
    }
    return undefined;
  }

  /** How the workspace's lock files disagree with the server's instructions, if one does. */
  private lockedInstructions(def: ServerDefinition, now: Pinned): { file: string; pinned: Pinned; changed: string[] } | undefined {
    for (const read of this.locks.readNow(def)) {
      if ('problem' in read) return { file: read.file, pinned: NO_PIN, changed: [`${BAD_LOCK}: ${read.problem}`] };
      if (read.pins.instructions.sha256 !== now.sha256) return { file: read.file, pinned: read.pins.instructions, changed: [INSTRUCTIONS] };
    }
    return undefined;
  }

  /** The first use the person allowed: the definition is pinned if nothing is pinned for it yet. */
  async pinFirstUse(def: ServerDefinition, kind: PinKind, item: Tool | Prompt): Promise<void> {
    const pin = pinOfItem(kind, item);
    if (pin.unpinnable || this.pinned(def, kind, item.name)) return;
    await this.store(def, kind, item.name, pin);
    this.emitter.fire();
  }

  /**
   * The person accepted the definitions as listed now: they are the pins, and each acceptance is
   * audited (origin person). What cannot be pinned (`Pinned.unpinnable`) stays as it is.
   */
  async accept(handle: ServerHandle, changes: readonly DefinitionChange[]): Promise<void> {
    const def = handle.definition;
    for (const c of changes) {
      if (c.now.unpinnable) continue;
      await this.store(def, c.kind, c.name, c.now);
      if (c.findings) await this.store(def, FLAGGED_KEY[c.kind], c.name, c.now);
      this.record(handle, 'definition-accepted', c);
    }
    await this.rememberFindings(handle, [...new Set(changes.map((c) => c.kind))]);
    this.emitter.fire();
  }

  private store(def: ServerDefinition, kind: ChangeKind | FlaggedKey, name: string, pinned: Pinned): Promise<void> {
    const key = this.key(def, kind, name);
    return this.save([[key, pinned]]);
  }

  /**
   * A server that runs: its instructions are pinned the first time it runs (the person started it,
   * or allowed it to start), and compared with that pin on every later start.
   */
  async noticeStart(handle: ServerHandle): Promise<void> {
    const client = handle.client;
    if (!client) return;
    if (!this.pinned(handle.definition, 'instructions', INSTRUCTIONS)) {
      await this.store(handle.definition, 'instructions', INSTRUCTIONS, pinInstructions(client.instructions));
    }
    this.notice(handle);
    await this.rememberFindings(handle, ['instructions']);
  }

  /**
   * Keeps what the scan found, and the person has not accepted, in the server's tools, prompts or
   * instructions as last listed: the launch consent shows it before the server runs again
   * (`knownFindings`). Written only when it differs.
   */
  private async rememberFindings(handle: ServerHandle, kinds: readonly ChangeKind[]): Promise<void> {
    const changes = this.changes(handle);
    const entries: StoredPin[] = [];
    for (const kind of kinds) {
      const findings = changes.flatMap((c) => (c.kind === kind ? (c.findings ?? []) : []));
      const key = this.key(handle.definition, 'scan', kind);
      if (stableStringify(this.pins.get(key)?.definition ?? []) !== stableStringify(findings))
        entries.push([key, { sha256: '', definition: findings }]);
    }
    if (entries.length) await this.save(entries);
  }

  /** What the scan found in the server when it last ran (its tools, prompts and instructions), not accepted since. */
  knownFindings(def: ServerDefinition): ScanFinding[] {
    return (['instructions', 'tools', 'prompts'] as const).flatMap((kind) => {
      const known = this.pins.get(this.key(def, 'scan', kind))?.definition;
      return Array.isArray(known) ? (known as ScanFinding[]) : [];
    });
  }

  /** The server's tools and prompts whose definitions, and its instructions if their text, differ from their pins now. */
  changes(handle: ServerHandle): DefinitionChange[] {
    const def = handle.definition;
    const out: DefinitionChange[] = [];
    const instructions = this.pinned(def, 'instructions', INSTRUCTIONS);
    const client = handle.client;
    if (client) {
      const now = pinInstructions(client.instructions);
      const locked = this.lockedInstructions(def, now);
      const findings = this.flaggedInstructions(handle);
      const flagged = findings.length ? { findings } : {};
      if (locked)
        out.push({
          kind: 'instructions',
          name: INSTRUCTIONS,
          pinned: locked.pinned,
          now,
          changed: locked.changed,
          lockFile: locked.file,
          ...flagged,
        });
      else if (instructions && now.sha256 !== instructions.sha256)
        out.push({ kind: 'instructions', name: INSTRUCTIONS, pinned: instructions, now, changed: [INSTRUCTIONS], ...flagged });
      else if (findings.length)
        out.push({
          kind: 'instructions',
          name: INSTRUCTIONS,
          pinned: instructions ?? now,
          now,
          changed: findings.map(flaggedMember),
          findings,
        });
    }
    for (const [kind, items] of [
      ['tools', handle.tools],
      ['prompts', handle.prompts],
    ] as const) {
      const seen = new Set<string>();
      for (const item of items) {
        // A name listed twice is one change, showing every definition it was listed with.
        if (seen.has(item.name)) continue;
        seen.add(item.name);
        const now = listedPin(handle, kind, item);
        if (now.unpinnable) {
          out.push({ kind, name: item.name, pinned: this.pinned(def, kind, item.name) ?? NO_PIN, now, changed: [now.unpinnable] });
          continue;
        }
        const locked = this.lockChange(def, kind, item.name, now);
        if (locked) {
          out.push({ kind, name: item.name, pinned: locked.pinned, now, changed: locked.changed, lockFile: locked.file });
          continue;
        }
        const pinned = this.pinned(def, kind, item.name);
        const status = compareOne(pinned, now);
        // A flagged tool's findings go with it: accepting the change accepts them too (the diff shows them, invisible characters marked).
        const findings = this.flagged(def, item, kind, ownToolNames(handle));
        const flagged = findings.length ? { findings } : {};
        if (pinned && status.status === 'changed') out.push({ kind, name: item.name, pinned, now, changed: status.changed, ...flagged });
        else if (findings.length)
          out.push({ kind, name: item.name, pinned: pinned ?? now, now, changed: findings.map(flaggedMember), findings });
      }
    }
    return out;
  }

  /**
   * After the server listed its tools (or prompts): the first listing of a server identity is its
   * baseline, pinned as it is (trust on first use: you started the server, and its annotations are
   * trusted as you configured); a tool that appears later is pinned only when you first use it.
   * Then every change not recorded yet is audited.
   */
  async noticeList(handle: ServerHandle, kind: PinKind): Promise<void> {
    const def = handle.definition;
    const marker = this.key(def, 'baseline', kind);
    if (!this.pins.has(marker)) {
      const items: ReadonlyArray<Tool | Prompt> = kind === 'tools' ? handle.tools : handle.prompts;
      // What cannot be pinned (a name listed twice, a number JSON cannot carry) gets no baseline: it stays a change.
      const fresh = items
        .filter((i) => !this.pinned(def, kind, i.name))
        .map((i): StoredPin => [this.key(def, kind, i.name), listedPin(handle, kind, i)])
        .filter(([, pin]) => !pin.unpinnable);
      const marked: StoredPin = [marker, { sha256: '', definition: null }];
      await this.save([...fresh, marked]);
      this.emitter.fire();
    }
    this.notice(handle);
    await this.rememberFindings(handle, [kind]);
  }

  /** After the server's lists changed: each change not recorded yet in this window is audited (origin server), and the tree and chat told. */
  notice(handle: ServerHandle): void {
    let fresh = false;
    for (const c of this.changes(handle)) {
      const key = `${this.key(handle.definition, c.kind, c.name)}\u0000${c.now.sha256}`;
      if (this.noticed.has(key)) continue;
      this.noticed.add(key);
      // Flagged on first sight is a record of its own kind; a changed definition that is also flagged is a change, with its findings.
      this.record(handle, c.findings && c.changed.every(isFlaggedMember) ? 'definition-flagged' : 'definition-changed', c);
      if (c.findings)
        handle.log(
          'warning',
          c.kind === 'instructions'
            ? `the server's instructions were flagged by MCP Host's scan (${c.findings.map((f) => f.detector).join(', ')}); MCP Host passes them to no model. Review Changes shows them`
            : `the ${c.kind === 'tools' ? 'tool' : 'prompt'} ${c.name} was flagged by MCP Host's scan (${c.findings.map((f) => f.detector).join(', ')}); it is offered to no model until you review and accept it`,
        );
      else if (c.kind === 'instructions')
        handle.log(
          'warning',
          c.lockFile
            ? `the server's instructions differ from the workspace lock file ${c.lockFile} (${c.changed.join(', ')}); MCP Host passes them to no model`
            : "the server's instructions changed since you approved them; MCP Host passes them to no model. Review Changes shows old beside new",
        );
      fresh = true;
    }
    if (fresh) this.emitter.fire();
  }

  private record(
    handle: ServerHandle,
    kind: 'definition-changed' | 'definition-accepted' | 'definition-flagged',
    c: DefinitionChange,
  ): void {
    this.audit.append(
      definitionRecord(kind, auditedServer(handle.definition), {
        kind: c.kind,
        name: c.name,
        pinned: c.pinned.sha256,
        now: c.now.sha256,
        changed: c.changed,
        findings: c.findings,
      }),
    );
  }
}

/** The server's own tool names: a prompt or its instructions may name them without shadowing anything. */
const ownToolNames = (handle: ServerHandle): string[] => handle.tools.map((t) => t.name);

/** The definitions of a review as JSON text: sorted keys, indented, every string inert text. */
export function definitionsText(items: ReadonlyArray<{ kind: ChangeKind; name: string; pinned: Pinned }>): string {
  const grouped: Record<string, Record<string, unknown>> = {};
  for (const i of items) (grouped[i.kind] ??= {})[i.name] = i.pinned.definition;
  // Characters nobody sees (tag text, zero-width, bidi controls) are shown marked: a diff must not hide what a model reads.
  return `${JSON.stringify(JSON.parse(stableStringify(grouped)), (_key, value: unknown) => (typeof value === 'string' ? invisibleMarked(value) : value), 2)}\n`;
}

/** The read-only documents the diff editor shows: one text per URI, kept while the window lives. */
export class PinnedDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private next = 0;

  static register(): { documents: PinnedDocuments; disposable: vscode.Disposable } {
    const documents = new PinnedDocuments();
    return { documents, disposable: vscode.workspace.registerTextDocumentContentProvider(PINNED_SCHEME, documents) };
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  /** A new read-only document holding `text`, named `name` (the diff editor's tab shows it). */
  add(name: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: PINNED_SCHEME, path: `/${this.next++}/${name}.json` });
    this.texts.set(uri.toString(), text);
    return uri;
  }
}
