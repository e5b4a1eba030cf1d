import type * as vscode from 'vscode';
import { SerialQueue } from '../../core';

/** One queue per memento and key: changes of one stored list run one at a time. */
const queues = new WeakMap<vscode.Memento, Map<string, SerialQueue>>();

function queueFor(memento: vscode.Memento, key: string): SerialQueue {
  let byKey = queues.get(memento);
  if (!byKey) queues.set(memento, (byKey = new Map()));
  let queue = byKey.get(key);
  if (!queue) byKey.set(key, (queue = new SerialQueue()));
  return queue;
}

/**
 * Changes the list stored under `key`, starting from what it holds when the change runs, not
 * from what was read before a prompt: two "always allow" answers given at once both stay.
 */
export function changeStoredList<T = string>(
  memento: vscode.Memento,
  key: string,
  change: (stored: readonly T[]) => readonly T[],
): Promise<void> {
  return queueFor(memento, key).run(async () => {
    await memento.update(key, change(memento.get<T[]>(key, [])));
  });
}

/** Adds `item` to the list stored under `key`, once. */
export function addToStoredList(memento: vscode.Memento, key: string, item: string): Promise<void> {
  return changeStoredList(memento, key, (stored) => (stored.includes(item) ? stored : [...stored, item]));
}
