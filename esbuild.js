// Bundles the extension and the command-line client. `--production` minifies and drops source maps;
// `--analyze` also prints what takes space in dist/extension.js (esbuild's metafile, by input file).
const path = require('node:path');
const esbuild = require('esbuild');

const production = process.argv.includes('--production');
const analyze = process.argv.includes('--analyze');
// `--test-seam`: the build the real-VS-Code suites install, whose exports can carry the host's internals
// (src/vscode/api.ts). Every other build is a release build: the seam is not in its bundle at all.
const testSeam = process.argv.includes('--test-seam');

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'warning',
  define: { 'process.env.MCP_HOST_BUILD': JSON.stringify(testSeam ? 'test' : 'release') },
  ...require('./scripts/bundle-options'),
};

// Ajv's compiler (src/core/schema/compiler.ts) stays out of dist/extension.js: the core's lazy
// require('./compiler') (src/core/schema/validator.ts) becomes require('./schema.js'), built below,
// loaded on the first schema a server sends (a tool's input or output, an elicitation form). The
// sandbox's network proxy likewise: require('./proxy') (src/core/servers/sandbox/launcher.ts)
// becomes require('./netproxy.js'), loaded when the first sandboxed server with allowed domains starts.
// And jsonc-parser: require('./jsoncParser') (src/core/jsonc.ts) becomes require('./jsonc.js'), loaded when
// JSON with comments is first read (an import, a tool's arguments edited as JSON), never at activation;
// and the HTTP transports: require('./http') (src/core/transport/lazyHttp.ts) becomes require('./http.js'),
// loaded when the first HTTP server starts.
const LAZY_CORE = {
  './compiler': { file: path.join(__dirname, 'src', 'core', 'schema', 'compiler.ts'), bundle: './schema.js' },
  './proxy': { file: path.join(__dirname, 'src', 'core', 'servers', 'sandbox', 'proxy.ts'), bundle: './netproxy.js' },
  './jsoncParser': { file: path.join(__dirname, 'src', 'core', 'jsoncParser.ts'), bundle: './jsonc.js' },
  './http': { file: path.join(__dirname, 'src', 'core', 'transport', 'http.ts'), bundle: './http.js' },
  // The OpenTelemetry SDK and its OTLP exporters: require('./otel') (src/core/telemetry/load.ts) becomes require('./otel.js'),
  // loaded once an endpoint is configured (the editor's settings, the CLI's OTEL_* variables), never otherwise.
  './otel': { file: path.join(__dirname, 'src', 'core', 'telemetry', 'otel.ts'), bundle: './otel.js' },
};
/** Makes the lazy requires of `names` (keys of LAZY_CORE) external, each to its own bundle. */
function lazyCoreOf(names) {
  const filter = new RegExp(`^\\./(${names.map((n) => n.slice(2)).join('|')})$`);
  return {
    name: 'lazy-core',
    setup(build) {
      build.onResolve({ filter }, async (args) => {
        if (args.kind !== 'require-call' || args.pluginData === 'resolving') return undefined;
        const lazy = LAZY_CORE[args.path];
        const resolved = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'resolving' });
        return resolved.path === lazy.file ? { path: lazy.bundle, external: true } : undefined;
      });
    },
  };
}
const lazyCore = lazyCoreOf(Object.keys(LAZY_CORE));

async function main() {
  const [extension] = await Promise.all([
    esbuild.build({
      ...common,
      entryPoints: ['src/extension.ts'],
      outfile: 'dist/extension.js',
      external: ['vscode', './auth.js', './apps.js', './setup.js', './forms.js', './gateway.js', './agents.js'],
      metafile: analyze,
      plugins: [lazyCore],
    }),
    // Ajv's compiler and formats: required by dist/extension.js on the first server schema to compile (lazyCore above).
    esbuild.build({ ...common, entryPoints: ['src/core/schema/compiler.ts'], outfile: 'dist/schema.js' }),
    // The sandbox's filtering proxy: required by dist/extension.js when a sandboxed server with network.allowedDomains starts (lazyCore above).
    esbuild.build({ ...common, entryPoints: ['src/core/servers/sandbox/proxy.ts'], outfile: 'dist/netproxy.js' }),
    // jsonc-parser: required by dist/extension.js on the first JSON with comments it reads (lazyCore above).
    esbuild.build({ ...common, entryPoints: ['src/core/jsoncParser.ts'], outfile: 'dist/jsonc.js' }),
    // The HTTP transports: required by dist/extension.js when the first HTTP server starts (lazyCore above).
    esbuild.build({ ...common, entryPoints: ['src/core/transport/http.ts'], outfile: 'dist/http.js' }),
    // OpenTelemetry: required by dist/extension.js and dist/cli.js once an endpoint is configured (lazyCore above).
    esbuild.build({ ...common, entryPoints: ['src/core/telemetry/otel.ts'], outfile: 'dist/otel.js' }),
    // OAuth, required by dist/extension.js when the first HTTP server needs it (LazyOAuth in src/vscode/host/host.ts).
    esbuild.build({ ...common, entryPoints: ['src/vscode/auth/oauth.ts'], outfile: 'dist/auth.js', external: ['vscode'] }),
    // MCP Apps: the SDK's AppBridge and the app panel, required by dist/extension.js on the first app (src/vscode/apps/appPanels.ts).
    esbuild.build({ ...common, entryPoints: ['src/vscode/apps/panel.ts'], outfile: 'dist/apps.js', external: ['vscode'] }),
    // Add, Import and Remove Server, Edit Server Settings: required by dist/extension.js when one of those commands runs (src/vscode/setup/serverSetup.ts).
    esbuild.build({ ...common, entryPoints: ['src/vscode/setup/lazy.ts'], outfile: 'dist/setup.js', external: ['vscode'] }),
    // Elicitation forms: required by dist/extension.js on the first form a server asks (src/vscode/elicitation/ui.ts).
    esbuild.build({ ...common, entryPoints: ['src/vscode/elicitation/forms.ts'], outfile: 'dist/forms.js', external: ['vscode'] }),
    // The chat gateway: the SDK's server and Streamable HTTP transport, required by dist/extension.js on the first server shared with the chat (src/vscode/gateway/chatSharing.ts).
    esbuild.build({ ...common, entryPoints: ['src/vscode/gateway/lazy.ts'], outfile: 'dist/gateway.js', external: ['vscode'] }),
    // Connect and Disconnect an Agent: the agents' JSON and TOML files edited in place (smol-toml), required by dist/extension.js when one of them runs (src/vscode/agents/agents.ts).
    esbuild.build({
      ...common,
      entryPoints: ['src/vscode/agents/lazy.ts'],
      outfile: 'dist/agents.js',
      external: ['vscode'],
      plugins: [lazyCore],
    }),
    // The relay VS Code starts for each shared server (stdio to the gateway's socket): Node's own modules only (src/core/gateway/relay.ts).
    esbuild.build({ ...common, entryPoints: ['src/core/gateway/relay.ts'], outfile: 'dist/relay.js' }),
    // The CLI loads only OpenTelemetry lazily (beside it in dist/): a run that exports nothing never reads it.
    esbuild.build({
      ...common,
      entryPoints: ['src/cli/main.ts'],
      outfile: 'dist/cli.js',
      banner: { js: '#!/usr/bin/env node' },
      plugins: [lazyCoreOf(['./otel'])],
    }),
  ]);
  if (analyze) console.log(await esbuild.analyzeMetafile(extension.metafile, { verbose: false }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
