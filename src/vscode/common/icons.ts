import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import { chooseIcons, IconResolver, type Icon, type IconFetch } from '../../core';

export type IconPath = vscode.Uri | { light: vscode.Uri; dark: vscode.Uri };

/**
 * The servers' icons as files of ours (`globalStorageUri/icons/<sha256>.<ext>`), which the tree
 * and the pickers show. `iconPath` answers at once: what is known, or undefined (the caller
 * keeps its theme icon) while the icon is checked, fetched and written; `onDidChange` fires when
 * it is ready. The rules are in core's icons.ts.
 */
let shared: ServerIcons | undefined;

/** For the pickers: the icon already known for these `icons` (a quick pick cannot redraw one item), starting the work otherwise. */
export function knownIcon(icons: readonly Icon[] | undefined): IconPath | undefined {
  return shared?.iconPath(icons);
}

/** How long a picker waits for icons not decided yet before it opens (then without them). */
const PICKER_ICON_WAIT_MS = 500;

/**
 * Starts the work for every icon a picker is about to show and waits a moment for it, so a
 * picker opened before the tree showed those items has their icons too. `data:` icons take
 * milliseconds; a slow `https:` fetch only costs the wait, and the next picker has it.
 */
export async function warmIcons(lists: ReadonlyArray<readonly Icon[] | undefined>, waitMs = PICKER_ICON_WAIT_MS): Promise<void> {
  const icons = shared;
  if (!icons) return;
  for (const list of lists) icons.iconPath(list);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([icons.settled(), new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
  clearTimeout(timer);
}

export class ServerIcons implements vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changeEmitter.event;
  private readonly known = new Map<string, IconPath | null>();
  private resolver: IconResolver<vscode.Uri>;
  /** Where the accepted icons are written. */
  readonly directory: vscode.Uri;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    storage: vscode.Uri,
    private readonly log?: (message: string) => void,
  ) {
    this.directory = vscode.Uri.joinPath(storage, 'icons');
    this.resolver = this.createResolver({});
    // The pickers live in modules of their own; one set of icons per extension host.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    shared = this;
  }

  /** Tests only: accept `http:` icons on loopback and forget what was decided so far. */
  setTestOptions(options: { allowLoopbackHttp?: boolean; fetch?: IconFetch }): void {
    this.known.clear();
    this.resolver = this.createResolver(options);
  }

  private createResolver(options: { allowLoopbackHttp?: boolean; fetch?: IconFetch }): IconResolver<vscode.Uri> {
    const dir = this.directory;
    return new IconResolver<vscode.Uri>({
      fetch: options.fetch,
      allowLoopbackHttp: options.allowLoopbackHttp,
      store: async (name, bytes) => {
        const file = vscode.Uri.joinPath(dir, name);
        try {
          await vscode.workspace.fs.stat(file);
        } catch {
          await vscode.workspace.fs.createDirectory(dir);
          await vscode.workspace.fs.writeFile(file, bytes);
        }
        return file;
      },
      onRefused: (src, reason) => this.log?.(`icon ${src.length > 80 ? `${src.slice(0, 80)}…` : src} refused: ${reason}`),
    });
  }

  /** The icon to show for these `icons`, once known; undefined for none (yet). */
  iconPath(icons: readonly Icon[] | undefined): IconPath | undefined {
    if (!Array.isArray(icons) || icons.length === 0) return undefined;
    const { light, dark } = chooseIcons(icons, 32);
    if (light.length === 0) return undefined;
    // A hash, not the text: `data:` URIs may be a few hundred KB each.
    const key = createHash('sha256')
      .update(JSON.stringify([light.map((i) => i.src), dark.map((i) => i.src)]))
      .digest('hex');
    if (this.known.has(key)) return this.known.get(key) ?? undefined;
    this.known.set(key, null);
    const resolver = this.resolver;
    const done: Promise<void> = Promise.all([resolver.resolveFirst(light), resolver.resolveFirst(dark)])
      .then(([l, d]) => {
        if (resolver !== this.resolver) return;
        const path: IconPath | null = l && d ? (l.toString() === d.toString() ? l : { light: l, dark: d }) : (l ?? d ?? null);
        this.known.set(key, path);
        if (path) this.changeEmitter.fire();
      })
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
    return undefined;
  }

  /** Tests: every icon asked for so far is decided. */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending);
  }

  dispose(): void {
    if (shared === this) shared = undefined;
    this.changeEmitter.dispose();
  }
}
