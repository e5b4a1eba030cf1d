import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AuditLog, FIRST_PREV, rotatedName, verifyAudit, verifyAuditFile } from '../../src/core/policy/audit';
import { createMasker } from '../../src/core/policy/mask';
import type { AuditEntry, Origin } from '../../src/core/policy/types';
import { Redactor } from '../../src/core';

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
      verdict.records.map((r) => r.origin),
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
    const whole = await verifyAuditFile(file, 2);
    assert.ok(whole.ok, JSON.stringify(whole));
    assert.equal(
      whole.records[whole.records.length - 1].arguments && (whole.records[whole.records.length - 1].arguments as { i: number }).i,
      11,
    );
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
      verdict.records.map((r) => (r.arguments as { i: number }).i),
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
    assert.match(errors[0].message, /EISDIR|EPERM|illegal operation/i);
  });
});
