import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  copyPolicyFile,
  PolicyFileError,
  readPolicyFile,
  readPolicyFileSync,
  writePolicyFile,
  writePolicyFileSync,
} from '../../src/core/files/policyFile';

/** The rules every policy file is opened by (src/core/files/policyFile.ts), as the editor's promise-based reads and writes meet them. */
describe('policy files: no link followed, no FIFO waited on, nothing over its limit read', () => {
  let dir: string;
  let workspace: string;
  let target: string;
  const TARGET = 'the person’s own file\n';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-policy-file-'));
    workspace = path.join(dir, 'workspace');
    fs.mkdirSync(path.join(workspace, '.vscode', 'mcp-pins'), { recursive: true });
    target = path.join(dir, 'target');
    fs.writeFileSync(target, TARGET);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const refused = (message: RegExp) => (e: unknown) => e instanceof PolicyFileError && message.test(e.message);

  it('refuses a link at the file, and in a folder between the chosen folder and the file; reads and writes a regular file', async () => {
    const file = path.join(workspace, '.vscode', 'mcp-pins', 'srv.json');
    fs.symlinkSync(target, file);
    await assert.rejects(readPolicyFile(file, 1024, { within: [workspace] }), refused(/srv\.json: is a symbolic link/));
    await assert.rejects(writePolicyFile(file, 'x', { within: [workspace] }), refused(/is a symbolic link/));
    assert.throws(() => writePolicyFileSync(file, 'x'), refused(/is a symbolic link/));
    fs.rmSync(file);
    fs.rmSync(path.join(workspace, '.vscode'), { recursive: true });
    fs.symlinkSync(dir, path.join(workspace, '.vscode'));
    fs.mkdirSync(path.join(dir, 'mcp-pins'));
    await assert.rejects(
      writePolicyFile(file, 'x', { within: [workspace] }),
      refused(new RegExp(`${path.join(workspace, '.vscode')}: is a symbolic link, on the way to ${file}`)),
    );
    assert.deepEqual(fs.readdirSync(path.join(dir, 'mcp-pins')), [], 'nothing was made through the link');
    // Without a chosen folder above it, only the file itself is judged: the person named that path.
    await writePolicyFile(file, '{"x":1}');
    assert.equal(await readPolicyFile(file, 1024), '{"x":1}');
    assert.equal(fs.readFileSync(target, 'utf8'), TARGET);
  });

  it('opens a FIFO without waiting for a writer and refuses it; refuses a folder and a file over the limit', async () => {
    const fifo = path.join(workspace, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    await assert.rejects(readPolicyFile(fifo, 1024), refused(/fifo\.json: is a FIFO, not a regular file/));
    assert.throws(() => readPolicyFileSync(fifo, 1024), refused(/is a FIFO/));
    await assert.rejects(writePolicyFile(fifo, 'x'), refused(/is a FIFO/));
    await assert.rejects(readPolicyFile(workspace, 1024), refused(/is a folder/));
    const huge = path.join(workspace, 'huge.json');
    fs.writeFileSync(huge, '');
    fs.truncateSync(huge, 10_000_000);
    await assert.rejects(readPolicyFile(huge, 1_000_000), refused(/is 10000000 bytes, over the 1000000 MCP Host reads of it/));
    fs.writeFileSync(huge, 'x'.repeat(1000));
    assert.equal((await readPolicyFile(huge, 1000)).length, 1000, 'a file at the limit is read');
  });

  it('writes a file with one name only, and gives a key file that existed the mode asked for', async () => {
    const hard = path.join(workspace, 'hard.key');
    fs.linkSync(target, hard);
    await assert.rejects(writePolicyFile(hard, 'x', { mode: 0o600 }), refused(/has 2 names \(hard links\)/));
    assert.equal(fs.readFileSync(target, 'utf8'), TARGET);
    assert.equal(await readPolicyFile(hard, 1024), TARGET, 'reading one is harmless');
    const key = path.join(workspace, 'audit.key');
    fs.writeFileSync(key, 'x'.repeat(500), { mode: 0o644 });
    await writePolicyFile(key, 'k\n', { mode: 0o600 });
    assert.equal(fs.readFileSync(key, 'utf8'), 'k\n');
    assert.equal(fs.statSync(key).mode & 0o777, 0o600);
  });

  it('copies a log into an export without following a link at either end', async () => {
    const log = path.join(workspace, 'audit.jsonl');
    fs.writeFileSync(log, 'a\n'.repeat(100_000));
    const exported = path.join(workspace, 'export.jsonl');
    fs.symlinkSync(target, exported);
    await assert.rejects(copyPolicyFile(log, exported), refused(/export\.jsonl: is a symbolic link/));
    assert.equal(fs.readFileSync(target, 'utf8'), TARGET);
    fs.rmSync(exported);
    await copyPolicyFile(log, exported);
    assert.equal(fs.readFileSync(exported, 'utf8'), fs.readFileSync(log, 'utf8'));
    const linkedLog = path.join(workspace, 'linked.jsonl');
    fs.symlinkSync(target, linkedLog);
    await assert.rejects(copyPolicyFile(linkedLog, path.join(workspace, 'other.jsonl')), refused(/linked\.jsonl: is a symbolic link/));
  });
});
