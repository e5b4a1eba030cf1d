// `npm run fuzz`: every property of properties.ts with many cases (100,000 by default), each
// property in a child process of its own, as many at once as there are CPUs.
//   npm run fuzz -- [--runs N] [--seed S] [--only substring]
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import { PROPERTIES } from './properties';

const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const runs = Number(option('--runs') ?? 100_000);
const seed = option('--seed') === undefined ? Date.now() % 2 ** 31 : Number(option('--seed'));

/** In a child: runs one property and prints one JSON line. */
async function runOne(index: number): Promise<void> {
  const property = PROPERTIES[index];
  const started = performance.now();
  try {
    await property.check(runs, seed);
    console.log(JSON.stringify({ ok: true, seconds: (performance.now() - started) / 1000 }));
  } catch (error) {
    const cause = (error as Error).cause;
    const message = `${(error as Error).message}${cause ? `\n${cause instanceof Error ? cause.message : String(cause)}` : ''}`;
    console.log(JSON.stringify({ ok: false, seconds: (performance.now() - started) / 1000, message }));
  }
  process.exit(0);
}

function spawnOne(index: number): Promise<{ ok: boolean; seconds: number; message?: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [...process.execArgv, __filename, '--child', String(index), '--runs', String(runs), '--seed', String(seed)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('close', (code) => {
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? ''));
      } catch {
        resolve({ ok: false, seconds: 0, message: `the child exited with ${code}: ${out}` });
      }
    });
  });
}

async function main(): Promise<void> {
  const only = option('--only');
  const chosen = PROPERTIES.map((p, i) => ({ p, i })).filter(({ p }) => !only || p.name.includes(only));
  console.log(`fast-check: ${runs.toLocaleString('en')} cases per property, seed ${seed}, ${chosen.length} properties`);
  const queue = [...chosen].sort((a, b) => (b.p.weight ?? 1) - (a.p.weight ?? 1));
  let failed = 0;
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const result = await spawnOne(next.i);
      if (result.ok) console.log(`  ok    ${next.p.name}: ${runs.toLocaleString('en')} cases in ${result.seconds.toFixed(1)} s`);
      else {
        failed++;
        console.log(`  FAIL  ${next.p.name}\n${result.message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(os.cpus().length, chosen.length)) }, worker));
  console.log(failed ? `${failed} properties failed` : `all ${chosen.length} properties held for ${runs.toLocaleString('en')} cases each`);
  process.exitCode = failed ? 1 : 0;
}

const child = option('--child');
void (child === undefined ? main() : runOne(Number(child)));
