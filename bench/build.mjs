// Bundles the benchmark and soak programs into .bench/, so what runs is plain JavaScript: no
// TypeScript loader in the measured processes, and nothing in dist/ is needed.
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

const options = (name, outfile) => ({
  entryPoints: [path.join(root, 'bench', `${name}.ts`)],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  logLevel: 'warning',
});

export async function buildBench(entries = ['client-ours', 'client-sdk', 'client-floor', 'soak']) {
  await Promise.all(entries.map((name) => esbuild.build(options(name, path.join(root, '.bench', `${name}.js`)))));
}

/**
 * `.bench/client-baseline.js`: today's bench/client-ours.ts and workloads, bundled with `src/` as it
 * was at the commit `ref` (read with `git archive`), so "no slower than before" is a ratio measured
 * in the same run. Resolves with the bundle's path, or rejects when git cannot give that tree.
 */
export async function buildBaseline(ref) {
  const tree = path.join(root, '.bench', 'baseline', ref.replace(/[^\w.-]/g, '_'));
  if (!fs.existsSync(path.join(tree, 'tsconfig.json'))) {
    fs.rmSync(tree, { recursive: true, force: true });
    fs.mkdirSync(tree, { recursive: true });
    const archive = execFileSync('git', ['-C', root, 'archive', '--format=tar', ref, 'src', 'tsconfig.json'], {
      maxBuffer: 256 * 1024 * 1024,
    });
    execFileSync('tar', ['-x', '-C', tree], { input: archive });
  }
  const oursEntry = path.join(root, 'bench', 'client-ours.ts');
  /** client-ours.ts's imports of ../src/… go to the old tree; everything else (workloads, node_modules) stays today's. */
  const oldSource = {
    name: 'baseline-src',
    setup(build) {
      build.onResolve({ filter: /^\.\.\/src\// }, (args) =>
        args.importer === oursEntry ? build.resolve(`./${args.path.slice(3)}`, { kind: args.kind, resolveDir: tree }) : undefined,
      );
    },
  };
  const outfile = path.join(root, '.bench', 'client-baseline.js');
  await esbuild.build({ ...options('client-ours', outfile), plugins: [oldSource] });
  return outfile;
}
