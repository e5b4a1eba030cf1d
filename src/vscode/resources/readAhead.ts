/**
 * One read shared by "may this open?" and the editor's own read. Opening a resource reads it
 * first (so a server's refusal opens no editor, only its message), and the editor's read that
 * follows gets those bytes instead of asking the server a second time. Entries are taken once,
 * and dropped unread after a short while (an editor that never asked).
 */
const KEEP_MS = 10_000;
const opening = new Set<string>();
const kept = new Map<string, { bytes: Uint8Array; timer: NodeJS.Timeout }>();

/** The next successful read of `uri` is kept for the editor that is about to open it. */
export function expectOpen(uri: string): void {
  opening.add(uri);
}

export function cancelOpen(uri: string): void {
  opening.delete(uri);
}

/** Called with each successful read: kept when an open of this URI waits for it. */
export function keepForOpen(uri: string, bytes: Uint8Array): void {
  if (!opening.delete(uri)) return;
  const timer = setTimeout(() => kept.delete(uri), KEEP_MS);
  timer.unref?.();
  kept.set(uri, { bytes, timer });
}

/** The bytes read just before the open, once (and so dropped); undefined when there are none. */
export function takeKept(uri: string): Uint8Array | undefined {
  const entry = kept.get(uri);
  if (!entry) return undefined;
  clearTimeout(entry.timer);
  kept.delete(uri);
  return entry.bytes;
}
