import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fsSync from 'node:fs';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { AuditLog } from '../../src/core/policy/audit';
import { FIRST_PREV, recordHash, rotatedName, verifyAudit, verifyAuditFile } from '../../src/core/policy/auditVerify';
import { createMasker } from '../../src/core/scan/mask';
import type { AnyAuditRecord, AuditEntry, AuditRecord, Origin } from '../../src/core/policy/types';
import { runCli } from '../../src/cli/main';
import { Redactor } from '../../src/core';
import { ROOT } from '../helpers/servers';

const entry = (origin: Origin, args?: unknown, name = 'echo'): AuditEntry => ({
  time: '2026-12-01T12:00:00.000Z',
  origin,
  server: { name: 'everything', scope: 'user', definition: 'd'.repeat(64) },
  method: origin === 'server' ? 'sampling/createMessage' : 'tools/call',
  name,
  arguments: args,
  decision: 'allowed',
  outcome: { kind: 'ok' },
  ms: 12,
});

describe('audit log', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-audit-'));
    file = path.join(dir, 'audit.jsonl');
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));
  const requests = (records: AnyAuditRecord[]) => records.filter((r): r is AuditRecord => r.kind === undefined);

  it('writes one chained line per entry, for every origin, and continues the chain when reopened', async () => {
    const origins: Origin[] = ['person', 'app', 'chat', 'cli', 'server'];
    const log = new AuditLog({ file });
    for (const origin of origins.slice(0, 3)) log.append(entry(origin, { n: origin }));
    await log.flushed();
    const again = new AuditLog({ file });
    for (const origin of origins.slice(3)) again.append(entry(origin));
    await again.flushed();
    const verdict = verifyAudit(await fs.readFile(file, 'utf8'));
    assert.ok(verdict.ok, JSON.stringify(verdict));
    assert.deepEqual(
      requests(verdict.records).map((r) => r.origin),
      origins,
    );
    assert.equal(verdict.records[0].prev, FIRST_PREV);
    assert.equal(verdict.records[3].prev, verdict.records[2].hash);
  });

  it('never writes a server secret or a secret shape from the arguments', async () => {
    const redactor = new Redactor();
    redactor.add('hunter2-very-secret');
    const github = 'ghp_' + 'x1Y2'.repeat(9);
    const log = new AuditLog({ file, redact: (t) => redactor.redact(t), masker: createMasker().masker });
    log.append(entry('person', { q: 'use hunter2-very-secret now', token: github, nested: [github] }, 'file:///x?key=hunter2-very-secret'));
    await log.flushed();
    const text = await fs.readFile(file, 'utf8');
    assert.ok(!text.includes('hunter2-very-secret'), text);
    assert.ok(!text.includes(github), text);
    assert.match(text, /\[masked: github-token\]/);
    assert.ok(verifyAudit(text).ok);
  });

  it('redacts a server secret that JSON would escape (a quote, a backslash) in each string as it is', async () => {
    const redactor = new Redactor();
    const secret = 'pa"ss\\word-42';
    redactor.add(secret);
    const log = new AuditLog({ file, redact: (t) => redactor.redact(t) });
    log.append(entry('person', { q: `login with ${secret}`, list: [secret] }, 'call'));
    await log.flushed();
    const record = JSON.parse((await fs.readFile(file, 'utf8')).trim()) as { arguments: { q: string; list: string[] } };
    assert.ok(!record.arguments.q.includes(secret), record.arguments.q);
    assert.ok(!record.arguments.list[0].includes(secret), record.arguments.list[0]);
  });

  describe('verify', () => {
    let lines: string[];
    beforeEach(async () => {
      const log = new AuditLog({ file });
      for (const name of ['a', 'b', 'c', 'd']) log.append(entry('person', undefined, name));
      await log.flushed();
      lines = (await fs.readFile(file, 'utf8')).trimEnd().split('\n');
      assert.ok(verifyAudit(lines.join('\n')).ok);
    });

    it('catches an edited record', () => {
      lines[2] = lines[2].replace('"name":"c"', '"name":"C"');
      assert.deepEqual(verifyAudit(lines.join('\n')), { ok: false, line: 3, reason: 'the record was changed (its hash does not match)' });
    });
    it('catches a deleted record', () => {
      lines.splice(1, 1);
      const verdict = verifyAudit(lines.join('\n'));
      assert.equal(verdict.ok, false);
      assert.equal(!verdict.ok && verdict.line, 2);
    });
    it('catches a deleted first record', () => {
      const verdict = verifyAudit(lines.slice(1).join('\n'));
      assert.equal(!verdict.ok && verdict.line, 1);
    });
    it('catches a reorder', () => {
      [lines[1], lines[2]] = [lines[2], lines[1]];
      const verdict = verifyAudit(lines.join('\n'));
      assert.equal(!verdict.ok && verdict.line, 2);
    });
    it('catches a line that is not a record', () => {
      lines.push('garbage');
      assert.deepEqual(verifyAudit(lines.join('\n')), { ok: false, line: 5, reason: 'not JSON' });
    });
  });

  it('rotates by size, keeps the given number of files, and the chain continues across them', async () => {
    const log = new AuditLog({ file, maxBytes: 600, keep: 2 });
    for (let i = 0; i < 12; i++) log.append(entry('cli', { i }));
    await log.flushed();
    assert.ok(await fs.stat(rotatedName(file, 1)));
    assert.ok(await fs.stat(rotatedName(file, 2)));
    await assert.rejects(fs.stat(rotatedName(file, 3)));
    const current = verifyAudit(await fs.readFile(file, 'utf8'));
    assert.equal(current.ok, false, 'the newest file links to the one before, not to zeros');
    const older = verifyAudit(
      await fs.readFile(rotatedName(file, 1), 'utf8'),
      JSON.parse((await fs.readFile(rotatedName(file, 1), 'utf8')).split('\n')[0]).prev,
    );
    assert.ok(older.ok);
    const firstOfCurrent = JSON.parse((await fs.readFile(file, 'utf8')).split('\n')[0]);
    assert.equal(firstOfCurrent.prev, older.records[older.records.length - 1].hash);
    const whole = await verifyAuditFile(file, { keep: 2 });
    assert.ok(whole.ok, JSON.stringify(whole));
    const last = requests(whole.records).pop();
    assert.equal((last?.arguments as { i: number }).i, 11);
  });

  it('writes a log the person deleted or moved away anew at its path, and never to the file that went', async () => {
    const log = new AuditLog({ file });
    log.append(entry('person', undefined, 'first'));
    await log.flushed();
    await fs.rm(file);
    log.append(entry('chat', undefined, 'after-delete'));
    await log.flushed();
    const recreated = (await fs.readFile(file, 'utf8')).trimEnd().split('\n');
    assert.deepEqual(
      recreated.map((l) => (JSON.parse(l) as { name: string }).name),
      ['after-delete'],
    );
    const moved = path.join(dir, 'kept.jsonl');
    await fs.rename(file, moved);
    log.append(entry('chat', undefined, 'after-move'));
    await log.flushed();
    assert.deepEqual(
      (await fs.readFile(file, 'utf8'))
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { name: string }).name),
      ['after-move'],
    );
    assert.equal((await fs.readFile(moved, 'utf8')).trimEnd().split('\n').length, 1, 'nothing more went to the moved file');
    if (process.platform !== 'win32') assert.equal((await fs.stat(file)).mode & 0o777, 0o600);
  });

  it('writes every record of one turn in order, chained, and opens the file again after close', async () => {
    const log = new AuditLog({ file });
    for (let i = 0; i < 50; i++) log.append(entry('chat', { i }));
    await log.close();
    log.append(entry('cli', { i: 50 }));
    await log.close();
    const verdict = verifyAudit(await fs.readFile(file, 'utf8'));
    assert.ok(verdict.ok, JSON.stringify(verdict));
    assert.deepEqual(
      requests(verdict.records).map((r) => (r.arguments as { i: number }).i),
      Array.from({ length: 51 }, (_, i) => i),
    );
  });

  it('reports a write error once and keeps taking records', async () => {
    await fs.mkdir(file);
    const errors: Error[] = [];
    const log = new AuditLog({ file, onError: (e) => errors.push(e) });
    for (let i = 0; i < 3; i++) log.append(entry('person'));
    await log.flushed();
    log.append(entry('person'));
    await log.flushed();
    assert.equal(errors.length, 1);
    assert.match(errors[0].message, /is a folder, not a regular file|EISDIR|EPERM|illegal operation/i);
  });

  /** `mcp-host audit verify …` in this process: its exit code and what it printed. */
  async function verifyCli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const sink = (into: (text: string) => void) =>
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          into(chunk.toString());
          done();
        },
      });
    const code = await runCli(
      ['audit', 'verify', ...args],
      sink((t) => (out += t)) as unknown as typeof process.stdout,
      sink((t) => (err += t)) as unknown as typeof process.stderr,
    );
    return { code, out, err };
  }

  /** Rewrites every record after an edit with a correct SHA-256 chain, as anyone can (the MACs kept as they were). */
  function rehash(text: string, edit: (record: AnyAuditRecord, index: number) => void): string {
    let prev = FIRST_PREV;
    return text
      .trimEnd()
      .split('\n')
      .map((line, index) => {
        const record = JSON.parse(line) as AnyAuditRecord;
        edit(record, index);
        const { hash: _hash, mac, ...rest } = record;
        const linked = { ...rest, prev };
        prev = recordHash(linked);
        return JSON.stringify({ ...linked, hash: prev, ...(mac === undefined ? {} : { mac }) });
      })
      .join('\n')
      .concat('\n');
  }

  describe('several writers, one chain', () => {
    /** Two writer processes started together, each appending `count` records; resolves when both are done. */
    async function twoWriters(count: number, key: string, ...rotation: string[]): Promise<void> {
      const writers = [0, 1].map(() => {
        const script = path.join(ROOT, 'test', 'fixtures', 'audit-writer.ts');
        const child = spawn(process.execPath, ['-r', 'tsx/cjs', script, file, String(count), key, ...rotation], {
          cwd: ROOT,
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const ready = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
        const exited = new Promise<{ code: number | null; stderr: string }>((resolve) =>
          child.on('exit', (code) => resolve({ code, stderr })),
        );
        return { child, ready, exited };
      });
      await Promise.all(writers.map((w) => w.ready));
      // Both go at once.
      for (const w of writers) w.child.stdin.write('go\n');
      for (const { code, stderr } of await Promise.all(writers.map((w) => w.exited))) assert.equal(code, 0, stderr);
    }

    /** How often the chain goes from one writer to the other: more than once when they really wrote at the same time. */
    const turns = (records: AnyAuditRecord[]) => {
      const byWriter = requests(records).map((r) => r.server.name);
      assert.equal(new Set(byWriter).size, 2, 'both writers are in the chain');
      return byWriter.filter((w, i) => i > 0 && w !== byWriter[i - 1]).length;
    };

    it('two processes appending to one file at once leave one chain of every record', async function () {
      this.timeout(60_000);
      const count = 240;
      const key = randomBytes(32).toString('hex');
      await twoWriters(count, key);
      const verdict = await verifyAuditFile(file, { key: Buffer.from(key, 'hex') });
      assert.ok(verdict.ok, JSON.stringify(verdict));
      assert.equal(verdict.records.length, 2 * count);
      const taken = turns(verdict.records);
      assert.ok(taken >= 2, `the writers took ${taken} turns`);
      await assert.rejects(fs.stat(`${file}.lock`), 'the lock is released');
    });

    it('two processes rotating one file while they append keep one chain across the files', async function () {
      this.timeout(60_000);
      const count = 150;
      const key = randomBytes(32).toString('hex');
      await twoWriters(count, key, '6000', '200');
      assert.ok(await fs.stat(rotatedName(file, 2)), 'the log rotated more than once');
      const verdict = await verifyAuditFile(file, { key: Buffer.from(key, 'hex'), keep: 200 });
      assert.ok(verdict.ok, JSON.stringify(verdict));
      assert.equal(requests(verdict.records).length, 2 * count);
      assert.equal(verdict.firstFile, 0, 'no file was lost');
      const numbers = verdict.records.flatMap((r) => (r.kind === 'rotation' ? [r.file] : []));
      assert.deepEqual(
        numbers,
        numbers.map((_, i) => i + 1),
        'each rotation numbers its file one after the last',
      );
      assert.ok(turns(verdict.records) >= 2);
    });

    it('links its next batch to a record another writer appended since its own last one', async () => {
      const first = new AuditLog({ file });
      const second = new AuditLog({ file });
      first.append(entry('person', undefined, 'a'));
      await first.flushed();
      second.append(entry('chat', undefined, 'b'));
      await second.flushed();
      first.append(entry('person', undefined, 'c'));
      await first.flushed();
      const verdict = verifyAudit(await fs.readFile(file, 'utf8'));
      assert.ok(verdict.ok, JSON.stringify(verdict));
      assert.deepEqual(
        requests(verdict.records).map((r) => r.name),
        ['a', 'b', 'c'],
      );
    });

    it('takes a lock older than its bound, whoever holds it', async () => {
      await fs.writeFile(`${file}.lock`, JSON.stringify({ pid: process.pid, host: 'another-host', time: '2026-01-01T00:00:00.000Z' }));
      const old = new Date(Date.now() - 60_000);
      await fs.utimes(`${file}.lock`, old, old);
      const errors: Error[] = [];
      const log = new AuditLog({ file, lock: { staleMs: 1_000, timeoutMs: 30_000 }, onError: (e) => errors.push(e) });
      log.append(entry('person', undefined, 'after-old-lock'));
      await log.flushed();
      assert.equal(errors.length, 0, errors.join('; '));
      assert.match(await fs.readFile(file, 'utf8'), /after-old-lock/);
    });

    it('takes a lock its holder left behind (the process is gone), and waits for one that is held', async () => {
      const dead = spawn(process.execPath, ['-e', '']);
      const deadPid = await new Promise<number>((resolve) => dead.on('exit', () => resolve(dead.pid!)));
      await fs.writeFile(`${file}.lock`, JSON.stringify({ pid: deadPid, host: os.hostname(), time: new Date().toISOString() }));
      const errors: Error[] = [];
      const log = new AuditLog({ file, lock: { staleMs: 60_000, timeoutMs: 200 }, onError: (e) => errors.push(e) });
      log.append(entry('person', undefined, 'after-dead-holder'));
      await log.flushed();
      assert.equal(errors.length, 0, errors.join('; '));
      // A live holder (this process) within the bound: the batch fails, reported, and the next one, once it is released, lands.
      await fs.writeFile(`${file}.lock`, JSON.stringify({ pid: process.pid, host: os.hostname(), time: new Date().toISOString() }));
      log.append(entry('person', undefined, 'while-held'));
      await log.flushed();
      assert.equal(errors.length, 1);
      assert.match(errors[0].message, /locked by another writer \(pid \d+/);
      await fs.rm(`${file}.lock`);
      log.append(entry('person', undefined, 'after-release'));
      await log.flushed();
      const verdict = verifyAudit(await fs.readFile(file, 'utf8'));
      assert.ok(verdict.ok, JSON.stringify(verdict));
      assert.deepEqual(
        requests(verdict.records).map((r) => r.name),
        ['after-dead-holder', 'after-release'],
      );
    });
  });

  describe('it never stops', () => {
    it('appends after a planted 1 GiB file with no line in it, reading only its end, and starts the chain again', async function () {
      this.timeout(90_000);
      // Sparse zeros: no disk used, no newline anywhere. The search for the last record once copied
      // its growing tail on every 64 KiB read (hours for this file, and all of it in memory).
      await fs.writeFile(file, '');
      await fs.truncate(file, 2 ** 30);
      const script = [
        "const { AuditLog } = require('./src/core/policy/audit');",
        'const log = new AuditLog({ file: process.argv[1], onError: (e) => { console.error(e.message); process.exitCode = 3; } });',
        `log.append(${JSON.stringify(entry('cli', { n: 1 }, 'after-junk'))});`,
        'log.close();',
      ].join('\n');
      const run = spawnSync(process.execPath, ['-r', 'tsx/cjs', '-e', script, file], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
      assert.equal(run.signal, null, 'the writer did not finish: it was killed');
      assert.equal(run.status, 0, run.stderr);
      // The junk was past the size bound: rotated away whole (its cut line closed by a newline), and
      // the new file is a chain of its own.
      assert.equal((await fs.stat(rotatedName(file, 1))).size, 2 ** 30 + 1);
      const verdict = verifyAudit(await fs.readFile(file, 'utf8'));
      assert.ok(verdict.ok, JSON.stringify(verdict));
      assert.deepEqual(
        requests(verdict.records).map((r) => r.name),
        ['after-junk'],
      );
    });

    it('writes a record whose arguments are nested 3,000 levels deep, cut at a placeholder, and the next one', async () => {
      let deep: unknown = 'bottom';
      for (let i = 0; i < 3000; i++) deep = { a: deep };
      const errors: Error[] = [];
      const log = new AuditLog({ file, masker: createMasker().masker, onError: (e) => errors.push(e) });
      log.append(entry('cli', deep, 'deep'));
      log.append(entry('cli', { ok: true }, 'after'));
      await log.flushed();
      assert.equal(errors.length, 0, errors.join('; '));
      const verdict = verifyAudit(await fs.readFile(file, 'utf8'));
      assert.ok(verdict.ok, JSON.stringify(verdict).slice(0, 500));
      assert.deepEqual(
        requests(verdict.records).map((r) => r.name),
        ['deep', 'after'],
      );
      assert.match(JSON.stringify(verdict.records[0].kind === undefined && verdict.records[0].arguments), /nested deeper than 64 levels/);
    });

    it('writes a placeholder, never the raw value, when masking throws, and goes on', async () => {
      const errors: Error[] = [];
      let throwing = true;
      const masker = createMasker().masker;
      const log = new AuditLog({
        file,
        masker: {
          maskText: (t) => masker.maskText(t),
          maskParts: (parts) => masker.maskParts(parts),
          maskValue: (v) => {
            if (throwing) throw new Error('masker broke');
            return masker.maskValue(v);
          },
        },
        onError: (e) => errors.push(e),
      });
      log.append(entry('person', { token: 'raw-secret-value' }, 'first'));
      await log.flushed();
      log.append(entry('person', { token: 'raw-secret-value' }, 'again'));
      await log.flushed();
      throwing = false;
      log.append(entry('person', { n: 2 }, 'second'));
      await log.flushed();
      const text = await fs.readFile(file, 'utf8');
      assert.ok(!text.includes('raw-secret-value'), text);
      const verdict = verifyAudit(text);
      assert.ok(verdict.ok);
      assert.deepEqual(
        requests(verdict.records).map((r) => [r.name, r.arguments]),
        [
          ['[not recorded: it could not be masked]', '[not recorded: it could not be masked]'],
          ['[not recorded: it could not be masked]', '[not recorded: it could not be masked]'],
          ['second', { n: 2 }],
        ],
      );
      assert.equal(errors.length, 1, 'said once, not once per batch');
    });

    it('reports a failing streak once, again after a success, and writes the next batch after each fault', async () => {
      const errors: Error[] = [];
      // Short lock bounds: the folder in the lock's place below is given up on soon.
      const log = new AuditLog({ file, lock: { staleMs: 100, timeoutMs: 200 }, onError: (e) => errors.push(e) });
      await fs.mkdir(file);
      log.append(entry('person', undefined, 'lost-1'));
      await log.flushed();
      log.append(entry('person', undefined, 'lost-2'));
      await log.flushed();
      assert.equal(errors.length, 1, 'one report for the streak');
      await fs.rmdir(file);
      log.append(entry('person', undefined, 'lands-1'));
      await log.flushed();
      // The lock's place taken by a folder: the next streak is reported again.
      await fs.mkdir(`${file}.lock`);
      log.append(entry('person', undefined, 'lost-3'));
      await log.flushed();
      assert.equal(errors.length, 2, 'a new streak after a success is reported');
      await fs.rmdir(`${file}.lock`);
      log.append(entry('person', undefined, 'lands-2'));
      await log.flushed();
      const verdict = verifyAudit(await fs.readFile(file, 'utf8'));
      assert.ok(verdict.ok, JSON.stringify(verdict));
      assert.deepEqual(
        requests(verdict.records).map((r) => r.name),
        ['lands-1', 'lands-2'],
      );
    });

    it('writes records without MACs, reported once, while the key cannot be had, and with them once it can', async () => {
      const errors: Error[] = [];
      const key = randomBytes(32);
      let available = false;
      const log = new AuditLog({
        file,
        key: async () => {
          if (!available) throw new Error('no keychain');
          return key;
        },
        onError: (e) => errors.push(e),
      });
      for (const name of ['a', 'b']) {
        log.append(entry('person', undefined, name));
        await log.flushed();
      }
      available = true;
      log.append(entry('person', undefined, 'c'));
      await log.flushed();
      assert.equal(errors.length, 1);
      assert.match(errors[0].message, /key is not available.*no keychain/);
      const verdict = verifyAudit(await fs.readFile(file, 'utf8'), FIRST_PREV, key);
      assert.ok(verdict.ok, JSON.stringify(verdict));
      assert.deepEqual(verdict.macs, { checked: true, unsigned: 2 });
    });

    it('makes the folder again when it was deleted, and writes; a file where the folder should be is a reported fault', async () => {
      const errors: Error[] = [];
      const nested = path.join(dir, 'logs', 'audit.jsonl');
      const log = new AuditLog({ file: nested, onError: (e) => errors.push(e) });
      log.append(entry('person', undefined, 'first'));
      await log.flushed();
      await fs.rm(path.join(dir, 'logs'), { recursive: true });
      log.append(entry('person', undefined, 'after-folder-deleted'));
      await log.flushed();
      assert.equal(errors.length, 0, errors.join('; '));
      await fs.rm(path.join(dir, 'logs'), { recursive: true });
      await fs.writeFile(path.join(dir, 'logs'), 'not a folder');
      log.append(entry('person', undefined, 'lost'));
      await log.flushed();
      assert.equal(errors.length, 1);
      assert.match(errors[0].message, /ENOTDIR|EEXIST/);
      await fs.rm(path.join(dir, 'logs'));
      log.append(entry('person', undefined, 'lands'));
      await log.flushed();
      const verdict = verifyAudit(await fs.readFile(nested, 'utf8'));
      assert.ok(verdict.ok, JSON.stringify(verdict));
      assert.deepEqual(
        requests(verdict.records).map((r) => r.name),
        ['lands'],
      );
    });

    it('goes on when the error handler and the written handler throw', async () => {
      await fs.mkdir(file);
      const log = new AuditLog({
        file,
        onError: () => {
          throw new Error('handler broke');
        },
        onWritten: () => {
          throw new Error('remembering broke');
        },
      });
      log.append(entry('person', undefined, 'lost'));
      await log.flushed();
      await fs.rmdir(file);
      log.append(entry('person', undefined, 'lands'));
      await log.flushed();
      log.append(entry('person', undefined, 'lands-too'));
      await log.flushed();
      const verdict = verifyAudit(await fs.readFile(file, 'utf8'));
      assert.ok(verdict.ok, JSON.stringify(verdict));
      assert.deepEqual(
        requests(verdict.records).map((r) => r.name),
        ['lands', 'lands-too'],
      );
    });

    it('starts a line of its own after a line a crash cut short, linked to the last whole record', async () => {
      const log = new AuditLog({ file });
      log.append(entry('person', undefined, 'whole'));
      await log.close();
      await fs.appendFile(file, '{"time":"2026-12-01T12:00:00.000Z","orig');
      const again = new AuditLog({ file });
      again.append(entry('person', undefined, 'after-crash'));
      await again.close();
      const lines = (await fs.readFile(file, 'utf8')).trimEnd().split('\n');
      assert.equal(lines.length, 3);
      assert.equal((JSON.parse(lines[2]) as AuditRecord).prev, (JSON.parse(lines[0]) as AuditRecord).hash);
      assert.deepEqual(verifyAudit(lines.join('\n')), { ok: false, line: 2, reason: 'not JSON' });
    });
  });

  describe('a cut is caught by the head', () => {
    it('prints the head, and fails --head once the records after it are cut', async () => {
      const log = new AuditLog({ file });
      for (const name of ['a', 'b', 'c', 'd']) log.append(entry('person', undefined, name));
      await log.close();
      const whole = await verifyCli(file);
      assert.equal(whole.code, 0, whole.err);
      const head = /^4 records, chain intact, head ([0-9a-f]{64})$/m.exec(whole.out)?.[1];
      assert.ok(head, whole.out);
      assert.match(whole.out, /MACs not checked/);
      const kept = await verifyCli(file, '--head', head);
      assert.equal(kept.code, 0, kept.err);
      assert.match(kept.out, /found; 0 records follow it/);
      const lines = (await fs.readFile(file, 'utf8')).trimEnd().split('\n');
      const second = (JSON.parse(lines[1]) as AuditRecord).hash;
      assert.match((await verifyCli(file, '--head', second)).out, /found; 2 records follow it/);
      // The last two records deleted: what is left is a good chain, but not the head kept.
      await fs.writeFile(file, `${lines.slice(0, 2).join('\n')}\n`);
      const cut = await verifyCli(file);
      assert.equal(cut.code, 0, 'a cut chain still verifies: only the head catches it');
      const caught = await verifyCli(file, '--head', head);
      assert.equal(caught.code, 1);
      assert.match(caught.err, /is not in the chain: records were cut/);
      assert.equal((await verifyCli(file, '--head', 'not-a-hash')).code, 2);
    });

    it('starts each rotated file with a record naming the previous file and head; a deleted oldest file fails --head', async () => {
      const log = new AuditLog({ file, maxBytes: 700, keep: 2 });
      const heads: string[] = [];
      const logWithHeads = new AuditLog({ file, maxBytes: 700, keep: 2, onWritten: (h) => heads.push(h) });
      for (let i = 0; i < 3; i++) {
        logWithHeads.append(entry('cli', { i }));
        await logWithHeads.flushed();
      }
      await logWithHeads.close();
      for (let i = 3; i < 10; i++) log.append(entry('cli', { i }));
      await log.close();
      const firstOf = async (f: string) => JSON.parse((await fs.readFile(f, 'utf8')).split('\n')[0]) as AnyAuditRecord;
      const current = await firstOf(file);
      const older = await firstOf(rotatedName(file, 1));
      assert.equal(current.kind, 'rotation');
      assert.equal(older.kind, 'rotation');
      if (current.kind !== 'rotation' || older.kind !== 'rotation') return;
      assert.equal(current.previous.file, older.file);
      assert.equal(current.file, older.file + 1);
      assert.equal(current.previous.head, current.prev);
      const olderRecords = verifyAudit(await fs.readFile(rotatedName(file, 1), 'utf8'), older.prev);
      assert.ok(olderRecords.ok);
      assert.equal(current.previous.head, olderRecords.records[olderRecords.records.length - 1].hash);
      const all = await verifyAuditFile(file, { keep: 2 });
      assert.ok(all.ok, JSON.stringify(all));
      assert.ok(all.firstFile > 0, 'the oldest files were rotated away');
      // A head kept from the oldest file kept, then that file deleted (as rotation, or someone, would).
      const keptHead = all.records[1].hash;
      const before = await verifyCli(file, '--head', keptHead);
      assert.equal(before.code, 0, before.err);
      await fs.rm(rotatedName(file, 2));
      const afterDelete = await verifyCli(file);
      assert.equal(afterDelete.code, 0, 'the newer files alone are still a chain');
      const caught = await verifyCli(file, '--head', keptHead);
      assert.equal(caught.code, 1, 'but the head kept is gone');
      assert.match(caught.err, /not in the chain/);
      assert.ok(heads.length === 3 && heads.every((h) => /^[0-9a-f]{64}$/.test(h)));
    });
    it('fails a log whose front was cut and the rest laid out as rotated files: the oldest must start the log, --head or not', async () => {
      const log = new AuditLog({ file });
      for (let i = 0; i < 6; i++) log.append(entry('cli', { i }));
      await log.close();
      const lines = (await fs.readFile(file, 'utf8')).trimEnd().split('\n');
      const head = (JSON.parse(lines[5]) as AuditRecord).hash;
      assert.equal((await verifyCli(file, '--head', head)).code, 0);
      // Records 1 and 2 deleted; 3 and 4 made to look like an older file kept by rotation, 5 and 6 left.
      await fs.writeFile(rotatedName(file, 1), `${lines.slice(2, 4).join('\n')}\n`);
      await fs.writeFile(file, `${lines.slice(4).join('\n')}\n`);
      for (const args of [[file], [file, '--head', head]]) {
        const cut = await verifyCli(...args);
        assert.equal(cut.code, 1, cut.out);
        assert.doesNotMatch(cut.out, /chain intact/);
        assert.match(
          cut.err,
          /audit\.1\.jsonl:1: the oldest file does not start the log: .*no rotation record \(records were cut from its front\)/,
        );
      }
      // The same cut in one file.
      await fs.rm(rotatedName(file, 1));
      assert.match((await verifyCli(file)).err, /audit\.jsonl:1: the oldest file does not start the log/);
    });

    it('a log that starts with its rotation record (the files before it rotated away) verifies, and says from which file', async () => {
      const log = new AuditLog({ file, maxBytes: 700, keep: 1 });
      for (let i = 0; i < 8; i++) log.append(entry('cli', { i }));
      await log.close();
      await fs.rm(rotatedName(file, 1));
      const alone = await verifyCli(file);
      assert.equal(alone.code, 0, alone.err);
      assert.match(alone.out, /the oldest file kept is number \d+: the ones before it were rotated away/);
    });

    it('writes Infinity and NaN as text, so 1e999 and -1e999 are told apart; a record edited to hold 1e999 fails', async () => {
      const log = new AuditLog({ file });
      log.append(entry('cli', { big: Number.POSITIVE_INFINITY, small: Number.NEGATIVE_INFINITY, nan: Number.NaN }));
      await log.close();
      const text = await fs.readFile(file, 'utf8');
      assert.deepEqual((JSON.parse(text) as AuditRecord).arguments, { big: 'Infinity', small: '-Infinity', nan: 'NaN' });
      assert.equal((await verifyCli(file)).code, 0);
      await fs.writeFile(file, text.replace('"Infinity"', '1e999'));
      const edited = await verifyCli(file);
      assert.equal(edited.code, 1);
      assert.match(edited.err, /:1: the record holds a number JSON cannot carry/);
    });
  });

  describe('a re-hash is caught by the MAC', () => {
    let keyFile: string;
    beforeEach(async () => {
      keyFile = path.join(dir, 'audit.key');
    });

    it('--audit-key creates a 0600 key; a record edited and re-hashed fails with the key, not without', async () => {
      const key = randomBytes(32);
      await fs.writeFile(keyFile, key.toString('hex'), { mode: 0o600 });
      const log = new AuditLog({ file, key });
      for (const name of ['a', 'b', 'c']) log.append(entry('person', { q: name }, name));
      await log.close();
      const good = await verifyCli(file, '--audit-key', keyFile);
      assert.equal(good.code, 0, good.err);
      assert.match(good.out, /^MACs valid$/m);
      const text = await fs.readFile(file, 'utf8');
      const forged = rehash(text, (r, i) => {
        if (i === 1 && r.kind === undefined) r.arguments = { q: 'forged' };
      });
      await fs.writeFile(file, forged);
      const without = await verifyCli(file);
      assert.equal(without.code, 0, 'the SHA-256 chain alone cannot tell');
      assert.match(without.out, /MACs not checked/);
      const withKey = await verifyCli(file, '--audit-key', keyFile);
      assert.equal(withKey.code, 1);
      assert.match(withKey.err, /audit\.jsonl:2: the MAC does not match/);
      // Every MAC stripped, to pass as a log written without a key: caught too.
      await fs.writeFile(
        file,
        rehash(text, (r) => {
          delete r.mac;
        }),
      );
      assert.match((await verifyCli(file, '--audit-key', keyFile)).err, /no record carries a MAC/);
      // A record without a MAC after one with: added without the key.
      await fs.writeFile(
        file,
        rehash(text, (r, i) => {
          if (i === 2) delete r.mac;
        }),
      );
      assert.match((await verifyCli(file, '--audit-key', keyFile)).err, /:3: the record has no MAC/);
    });

    it('accepts records written before MACs as a prefix, and says how many', async () => {
      const plain = new AuditLog({ file });
      plain.append(entry('person', undefined, 'before'));
      await plain.close();
      const key = randomBytes(32);
      await fs.writeFile(keyFile, key.toString('hex'));
      const signed = new AuditLog({ file, key });
      signed.append(entry('person', undefined, 'after'));
      await signed.close();
      const verdict = await verifyCli(file, '--audit-key', keyFile);
      assert.equal(verdict.code, 0, verdict.err);
      assert.match(verdict.out, /the first 1 records carry none/);
    });

    it('the CLI creates a missing key file with mode 0600 and signs with it', async () => {
      const created = await runCli(
        ['--stdio', 'no-such-command-xyz', '--audit', file, '--audit-key', keyFile, 'tools'],
        new Writable({ write: (_c, _e, d) => d() }) as unknown as typeof process.stdout,
        new Writable({ write: (_c, _e, d) => d() }) as unknown as typeof process.stderr,
      );
      assert.equal(created, 1, 'the server does not start, but the key is made first');
      const text = await fs.readFile(keyFile, 'utf8');
      assert.match(text.trim(), /^[0-9a-f]{64}$/);
      if (process.platform !== 'win32') assert.equal(fsSync.statSync(keyFile).mode & 0o777, 0o600);
      assert.equal((await verifyCli(file, '--audit-key', path.join(dir, 'missing.key'))).code, 1, 'verify never creates a key');
      await fs.writeFile(path.join(dir, 'bad.key'), 'not hex');
      assert.equal((await verifyCli(file, '--audit-key', path.join(dir, 'bad.key'))).code, 1);
    });
  });
});
