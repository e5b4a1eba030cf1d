// Bundles the benchmark and soak programs into .bench/, so what runs is plain JavaScript: no
// TypeScript loader in the measured processes, and nothing in dist/ is needed.
import * as esbuild from 'esbuild';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

export async function buildBench(entries = ['client-ours', 'client-sdk', 'client-floor', 'soak']) {
  await Promise.all(
    entries.map((name) =>
      esbuild.build({
        entryPoints: [path.join(root, 'bench', `${name}.ts`)],
        outfile: path.join(root, '.bench', `${name}.js`),
        bundle: true,
        platform: 'node',
        target: 'node20',
        format: 'cjs',
        logLevel: 'warning',
      }),
    ),
  );
}
