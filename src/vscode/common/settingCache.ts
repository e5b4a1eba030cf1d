/**
 * Settings read on every call, read from VS Code only after they change. A `getConfiguration()`
 * costs the extension host a tenth of a millisecond or more (it merges the configuration
 * models); the chat's calls through the gateway read the fence, the roots, the masking patterns
 * and the trace level each time (bench/chat-vscode-invoke.ts profiles it). A cached value is
 * dropped when a change affects its setting. Nothing is cached until `watchCachedSettings` runs
 * (first thing in `activate`, before any listener of the extension's, so a listener reading a
 * cached setting reads the new value); before that, or with no editor API, each read reads VS Code.
 */
import * as vscode from 'vscode';

interface Entry {
  section: string;
  value?: { current: unknown };
}
const entries: Entry[] = [];
let watching = false;

/** Starts dropping cached values on a change; until it runs nothing is cached. */
export function watchCachedSettings(): vscode.Disposable {
  const listener = vscode.workspace.onDidChangeConfiguration((e) => {
    for (const entry of entries) if (e.affectsConfiguration(entry.section)) entry.value = undefined;
  });
  watching = true;
  return new vscode.Disposable(() => {
    watching = false;
    listener.dispose();
    for (const entry of entries) entry.value = undefined;
  });
}

/** `read()`, computed again only after a change that affects `section` (a full setting id such as `mcpHost.trace`). */
export function cachedSetting<T>(section: string, read: () => T): () => T {
  const entry: Entry = { section };
  entries.push(entry);
  return () => {
    if (!watching) return read();
    entry.value ??= { current: read() };
    return entry.value.current as T;
  };
}
