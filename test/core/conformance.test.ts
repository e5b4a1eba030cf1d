import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The official conformance suite (`@modelcontextprotocol/conformance`, client scenarios) against
 * `mcp-host conformance`. The suite needs Node 22, which test/harness/install-node22.sh brings
 * from the npm registry; its mock servers are kept on loopback by test/harness/bind-loopback.cjs.
 */
const repo = path.resolve(__dirname, '..', '..');
const suiteBin = path.join(repo, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const clientScript = path.join(repo, 'test', 'harness', 'conformance-client.sh');
const bindLoopback = path.join(repo, 'test', 'harness', 'bind-loopback.cjs');
/** The suite's `-o` folders are `<scenario>-<ISO time with : and . replaced>`. */
const RESULT_DIR_SUFFIX = /-\d{4}-\d{2}-\d{2}T[\d-]+Z$/;
const SUITE_TIMEOUT_MS = 6 * 60_000;

interface Check {
  id: string;
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string;
  description: string;
  errorMessage?: string;
}

describe('conformance: the official client scenarios', function () {
  // Installing Node 22 the first time, building, then two dozen scenarios in parallel.
  this.timeout(SUITE_TIMEOUT_MS + 5 * 60_000);

  it('passes every client scenario, with no failure, no warning and no empty scenario', async function () {
    assert.ok(fs.existsSync(bindLoopback), `${bindLoopback} is missing: the suite's mock servers must be kept on loopback`);
    assert.ok(!/\s/.test(repo), 'the suite splits its --command on spaces, so the repository path must have none');

    const node22 = execFileSync('bash', [path.join(repo, 'test', 'harness', 'install-node22.sh')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 5 * 60_000,
    }).trim();
    execFileSync(process.execPath, ['esbuild.js'], { cwd: repo, stdio: 'inherit' });

    const env = { ...process.env, NODE_OPTIONS: `--require ${bindLoopback}`, MCP_HOST_NODE: process.execPath };
    const scenarios = execFileSync(node22, [suiteBin, 'list', '--client'], { encoding: 'utf8', env })
      .split('\n')
      .map((line) => /^\s+- (\S+)/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined);
    assert.equal(scenarios.length, 26, `expected the 26 client scenarios of 0.1.16, the suite lists ${scenarios.length}`);

    const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-host-conformance-'));
    const started = Date.now();
    const run = await runInOwnGroup(node22, [suiteBin, 'client', '--command', `sh ${clientScript}`, '--suite', 'all', '-o', outDir], { cwd: outDir, env }, SUITE_TIMEOUT_MS);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);

    const summary = run.stdout.split('\n').find((line) => line.startsWith('Total:')) ?? '(no summary line)';
    const results = readResults(outDir);
    const problems: string[] = [];
    for (const scenario of scenarios) {
      const checks = results.get(scenario);
      if (!checks) {
        problems.push(`${scenario}: no results`);
        continue;
      }
      if (checks.length === 0) problems.push(`${scenario}: produced no checks`);
      for (const c of checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')) {
        problems.push(`${scenario}: ${c.status} ${c.name}: ${c.errorMessage ?? c.description}`);
      }
    }
    const passing = scenarios.filter((s) => (results.get(s)?.length ?? 0) > 0 && !problems.some((p) => p.startsWith(`${s}:`))).length;
    // Not printed bare: the suite's "Total: N passed, N failed" would read as this whole run's test count.
    console.log(`      conformance suite → ${summary.trim()} | ${passing}/${scenarios.length} scenarios clean in ${seconds} s`);
    if (problems.length > 0) console.log(`      (results kept in ${outDir})`);
    else fs.rmSync(outDir, { recursive: true, force: true });

    assert.deepEqual(problems, [], `conformance problems:\n${problems.join('\n')}\n\n${run.stdout.slice(-4000)}`);
    assert.equal(run.timedOut, false, 'the suite did not finish in time');
    assert.equal(run.code, 0, `the suite exited with ${run.code}`);
  });
});

/** Every scenario's checks.json under the -o folder, by scenario name (which may contain '/'). */
function readResults(outDir: string): Map<string, Check[]> {
  const results = new Map<string, Check[]>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === 'checks.json') {
        const scenario = path.relative(outDir, dir).split(path.sep).join('/').replace(RESULT_DIR_SUFFIX, '');
        results.set(scenario, JSON.parse(fs.readFileSync(full, 'utf8')) as Check[]);
      }
    }
  };
  walk(outDir);
  return results;
}

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs a command in its own process group, so that it and every client it started can be ended together. */
function runInOwnGroup(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }, timeoutMs: number): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      killGroup(); // stragglers the suite left behind
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}
