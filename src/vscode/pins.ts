/**
 * The editor's pins (../core/policy/pins.ts): per server identity (the key of the "always"
 * answers), the definition of each tool and prompt as it was when the person first used or
 * approved it. A definition that differs now is suspended until the person reviews the change
 * (old beside new in VS Code's diff editor) and accepts it. Kept in the global state, like the
 * "always" answers; a grant (sandbox, policy) accepted later does not touch them.
 */
import * as vscode from 'vscode';
import { stableStringify } from '../core/protocol/stableStringify';
import { compareOne, pinPrompt, pinTool, type Pinned, type PinStatus } from '../core/policy/pins';
import { auditedServer } from '../core/policy/serverRequests';
import type { AuditSink } from '../core/policy/types';
import type { Prompt, ServerDefinition, ServerHandle, Tool } from '../core';
import { serverIdentity, type PinKind } from './gate';
import { changeStoredList } from './storedList';

const PINS_KEY = 'mcpHost.pinnedDefinitions';
/** The scheme of the review's read-only documents (old and new definition). */
export const PINNED_SCHEME = 'mcp-host-definition';

/** One stored pin: `identity \0 kind \0 name` and the definition with its hash. */
type StoredPin = [key: string, pinned: Pinned];

/** A tool or prompt whose definition differs from its pin. */
export interface DefinitionChange {
  kind: PinKind;
  name: string;
  pinned: Pinned;
  now: Pinned;
  changed: string[];
}

const pinOfItem = (kind: PinKind, item: Tool | Prompt): Pinned => (kind === 'tools' ? pinTool(item as Tool) : pinPrompt(item as Prompt));

export class DefinitionPins implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  /** A pin was taken or accepted, or a change was found: the tree and the chat's list follow. */
  readonly onDidChange = this.emitter.event;
  /** Changes recorded in the audit in this window (key and new hash): each is recorded once. */
  private readonly noticed = new Set<string>();

  constructor(
    private readonly memento: vscode.Memento,
    private readonly audit: AuditSink,
  ) {}

  dispose(): void {
    this.emitter.dispose();
  }

  private key(def: ServerDefinition, kind: PinKind, name: string): string {
    return [serverIdentity(def), kind, name].join('\u0000');
  }

  private pinned(def: ServerDefinition, kind: PinKind, name: string): Pinned | undefined {
    const key = this.key(def, kind, name);
    return this.memento.get<StoredPin[]>(PINS_KEY, []).find(([k]) => k === key)?.[1];
  }

  /** How the tool or prompt as listed now compares with its pin: same, changed (and what), or new (never pinned). */
  status(def: ServerDefinition, kind: PinKind, item: Tool | Prompt): PinStatus {
    return compareOne(this.pinned(def, kind, item.name), pinOfItem(kind, item));
  }

  /** The first use the person allowed: the definition is pinned if nothing is pinned for it yet. */
  async pinFirstUse(def: ServerDefinition, kind: PinKind, item: Tool | Prompt): Promise<void> {
    if (this.pinned(def, kind, item.name)) return;
    await this.store(def, kind, item.name, pinOfItem(kind, item));
    this.emitter.fire();
  }

  /** The person accepted the definitions as listed now: they are the pins, and each acceptance is audited (origin person). */
  async accept(handle: ServerHandle, changes: readonly DefinitionChange[]): Promise<void> {
    const def = handle.definition;
    for (const c of changes) {
      await this.store(def, c.kind, c.name, c.now);
      this.record(handle, 'definition-accepted', c);
    }
    this.emitter.fire();
  }

  private store(def: ServerDefinition, kind: PinKind, name: string, pinned: Pinned): Promise<void> {
    const key = this.key(def, kind, name);
    return changeStoredList<StoredPin>(this.memento, PINS_KEY, (stored) => [...stored.filter(([k]) => k !== key), [key, pinned]]);
  }

  /** The server's tools and prompts whose definitions differ from their pins now. */
  changes(handle: ServerHandle): DefinitionChange[] {
    const def = handle.definition;
    const out: DefinitionChange[] = [];
    for (const [kind, items] of [
      ['tools', handle.tools],
      ['prompts', handle.prompts],
    ] as const) {
      for (const item of items) {
        const pinned = this.pinned(def, kind, item.name);
        const now = pinOfItem(kind, item);
        const status = compareOne(pinned, now);
        if (pinned && status.status === 'changed') out.push({ kind, name: item.name, pinned, now, changed: status.changed });
      }
    }
    return out;
  }

  /** After the server's lists changed: each change not recorded yet in this window is audited (origin server), and the tree and chat told. */
  notice(handle: ServerHandle): void {
    let fresh = false;
    for (const c of this.changes(handle)) {
      const key = `${this.key(handle.definition, c.kind, c.name)}\u0000${c.now.sha256}`;
      if (this.noticed.has(key)) continue;
      this.noticed.add(key);
      this.record(handle, 'definition-changed', c);
      fresh = true;
    }
    if (fresh) this.emitter.fire();
  }

  private record(handle: ServerHandle, kind: 'definition-changed' | 'definition-accepted', c: DefinitionChange): void {
    this.audit.append({
      kind,
      time: new Date().toISOString(),
      origin: kind === 'definition-changed' ? 'server' : 'person',
      server: auditedServer(handle.definition),
      method: c.kind === 'tools' ? 'tools/call' : 'prompts/get',
      name: c.name,
      decision: kind === 'definition-changed' ? 'refused' : 'asked-allowed',
      outcome: { kind: 'not-sent' },
      ms: 0,
      definition: { pinned: c.pinned.sha256, now: c.now.sha256, changed: c.changed },
    });
  }
}

/** The definitions of a review as JSON text: sorted keys, indented, every string inert text. */
export function definitionsText(items: ReadonlyArray<{ kind: PinKind; name: string; pinned: Pinned }>): string {
  const grouped: Record<string, Record<string, unknown>> = {};
  for (const i of items) (grouped[i.kind] ??= {})[i.name] = i.pinned.definition;
  return `${JSON.stringify(JSON.parse(stableStringify(grouped)), null, 2)}\n`;
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
