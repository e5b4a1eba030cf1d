// Resolution options every esbuild bundle of src/ needs: the extension, the CLI and the test bundles.
const path = require('node:path');

module.exports = {
  // jsonc-parser's UMD main requires its own modules through a parameter esbuild cannot follow;
  // its ESM build bundles cleanly.
  // vscode-jsonrpc: only the few classes we use (see vscode-jsonrpc-runtime.js).
  alias: {
    'jsonc-parser': path.join(__dirname, '..', 'node_modules', 'jsonc-parser', 'lib', 'esm', 'main.js'),
    'vscode-jsonrpc/node': path.join(__dirname, 'vscode-jsonrpc-runtime.js'),
  },
};
