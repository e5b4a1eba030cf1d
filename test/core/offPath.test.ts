import { strict as assert } from 'node:assert';
import { OffPath } from '../../src/core/policy/offPath';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('work kept off a call’s path', () => {
  it('does what is added within the delay once, in order, after the delay and not in the next turn', async () => {
    const runs: number[][] = [];
    const later = new OffPath<number>((items) => runs.push(items), 20);
    later.add(1);
    later.add(2);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(runs, [], 'nothing in the turn after the call');
    later.add(3);
    await tick(40);
    assert.deepEqual(runs, [[1, 2, 3]]);
    later.add(4);
    await tick(40);
    assert.deepEqual(runs, [[1, 2, 3], [4]]);
  });

  it('does it at once when flushed, and never after it is disposed', async () => {
    const runs: string[][] = [];
    const later = new OffPath<string>((items) => runs.push(items), 20);
    later.flush();
    assert.deepEqual(runs, [], 'an empty flush runs nothing');
    later.add('a');
    later.flush();
    assert.deepEqual(runs, [['a']]);
    later.add('b');
    later.dispose();
    await tick(40);
    assert.deepEqual(runs, [['a']]);
  });
});
