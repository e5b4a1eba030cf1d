import { strict as assert } from 'node:assert';
import type * as vscode from 'vscode';
import { addToStoredList, changeStoredList } from '../../src/vscode/common/storedList';

/** A memento whose writes land a turn later (a store on disk or across processes): a reader sees the old value until then. */
function slowMemento(): vscode.Memento {
  const values = new Map<string, unknown>();
  const memento = {
    keys: () => [...values.keys()],
    get: <T>(key: string, fallback?: T) => (values.has(key) ? (values.get(key) as T) : fallback),
    update: async (key: string, value: unknown) => {
      await new Promise((resolve) => setImmediate(resolve));
      values.set(key, value);
    },
  };
  return memento as vscode.Memento;
}

describe('stored lists (the "always allow" mementos)', () => {
  it('keeps every item of answers given at once, each added from what is stored when its turn comes', async () => {
    const memento = slowMemento();
    await Promise.all(['a', 'b', 'c', 'b'].map((item) => addToStoredList(memento, 'always', item)));
    assert.deepEqual(memento.get('always'), ['a', 'b', 'c'], 'none lost, none twice');
    await Promise.all([
      addToStoredList(memento, 'other', 'x'),
      changeStoredList(memento, 'always', () => []),
      addToStoredList(memento, 'always', 'd'),
    ]);
    assert.deepEqual(memento.get('always'), ['d'], 'a reset and an add after it apply in the order asked');
    assert.deepEqual(memento.get('other'), ['x'], 'keys do not mix');
  });
});
