import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { descendants, groupTop, residentUnder, statFields, vmRssKb } from '../../bench/procMemory';

// bench/procMemory.ts, which the chat bench uses to read each relay's resident memory inside VS Code:
// its parsing of /proc against a made-up /proc (odd command names, a process with no VmRSS), and its
// walk of a real process tree on Linux.
describe('the chat bench: resident memory from /proc', () => {
  it('reads VmRSS in KiB, and nothing from a status without it', () => {
    assert.equal(vmRssKb('Name:\tnode\nVmPeak:\t  99 kB\nVmRSS:\t   46080 kB\nThreads:\t7\n'), 46080);
    assert.equal(vmRssKb('Name:\tkworker\nState:\tI (idle)\n'), undefined);
  });

  it('reads the parent and group after the last parenthesis of the command name', () => {
    assert.deepEqual(statFields('42 (node) S 7 42 42 0 -1'), { ppid: 7, pgrp: 42 });
    assert.deepEqual(statFields('43 (a) b) 9 (c) R 42 40 40 0 -1'), { ppid: 42, pgrp: 40 });
    assert.equal(statFields('garbage'), undefined);
  });

  it('walks a made-up /proc from one pid down, picks by command line and skips what has no VmRSS', () => {
    const proc = fs.mkdtempSync(path.join(os.tmpdir(), 'proc-'));
    try {
      const add = (pid: number, ppid: number, pgrp: number, argv: string[], rss?: number) => {
        fs.mkdirSync(path.join(proc, String(pid)));
        fs.writeFileSync(path.join(proc, String(pid), 'stat'), `${pid} (x) y) S ${ppid} ${pgrp} ${pgrp} 0 -1`);
        fs.writeFileSync(path.join(proc, String(pid), 'cmdline'), `${argv.join('\0')}\0`);
        fs.writeFileSync(path.join(proc, String(pid), 'status'), rss === undefined ? 'Name:\tx\n' : `Name:\tx\nVmRSS:\t${rss} kB\n`);
      };
      add(1, 0, 1, ['init']);
      add(10, 1, 10, ['server']);
      add(11, 10, 10, ['node', 'exthost']);
      add(12, 11, 10, ['node', '/ext/dist/relay.js', 'shared'], 45000);
      add(13, 11, 10, ['node', '/ext/dist/relay.js', 'floor'], 44000);
      add(14, 12, 10, ['node', '/ext/dist/relay.js', 'shared']);
      // The same command line outside the tree: never counted.
      add(20, 1, 20, ['node', '/ext/dist/relay.js', 'shared'], 47000);
      assert.deepEqual(descendants(10, proc).sort(), [10, 11, 12, 13, 14]);
      assert.equal(groupTop(11, proc), 10);
      assert.equal(groupTop(20, proc), 20);
      const relays = residentUnder(10, (argv) => argv[1]?.endsWith('relay.js') === true && argv[2] === 'shared', proc);
      assert.deepEqual(relays, [{ pid: 12, argv: ['node', '/ext/dist/relay.js', 'shared'], rssKb: 45000 }]);
      assert.deepEqual(
        residentUnder(10, () => true, path.join(proc, 'none')),
        [],
      );
    } finally {
      fs.rmSync(proc, { recursive: true, force: true });
    }
  });

  it('finds a real child by its command line, with a resident size above zero (Linux)', async function () {
    if (process.platform !== 'linux') this.skip();
    const marker = `proc-memory-test-${process.pid}`;
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', marker], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      // The exec has happened once the command line is the child's own.
      let found: ReturnType<typeof residentUnder> = [];
      for (let i = 0; i < 100 && !found.length; i++) {
        found = residentUnder(process.pid, (argv) => argv.includes(marker));
        if (!found.length) await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(found.length, 1);
      assert.equal(found[0].pid, child.pid);
      assert.ok(found[0].rssKb > 0);
      assert.deepEqual(
        residentUnder(child.pid!, (argv) => argv.includes(marker)).map((p) => p.pid),
        [child.pid],
      );
    } finally {
      child.kill();
    }
  });
});
