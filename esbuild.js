// Bundles the extension and the command-line client. `--production` minifies and drops source maps.
const esbuild = require('esbuild');

const production = process.argv.includes('--production');

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'warning',
  ...require('./scripts/bundle-options'),
};

async function main() {
  await Promise.all([
    esbuild.build({ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] }),
    esbuild.build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } }),
  ]);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
