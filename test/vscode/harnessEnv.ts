// Shared by the extension-host suites (test/vscode/*.test.ts). Not a suite itself: only *.test.ts
// files are picked up. The harness sets these variables through the smoke-test driver's
// extensionEnvironment; see test/harness/run-vscode-tests.js.

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run these suites through test/harness/run-vscode-tests.js`);
  return v;
}

export const env = {
  /** The repository root (package.json, node_modules). */
  get repo(): string {
    return required('MCP_HOST_REPO');
  },
  /** The scratch copy of test/vscode/workspace opened as the workspace folder. */
  get workspace(): string {
    return required('MCP_HOST_WORKSPACE');
  },
  /** Absolute path of @modelcontextprotocol/server-everything's dist/index.js (run it with `stdio`). */
  get everythingServer(): string {
    return required('MCP_HOST_EVERYTHING_SERVER');
  },
  /** A scratch folder the suites may write to (kept after the run for inspection). */
  get out(): string {
    return required('MCP_HOST_TEST_OUT');
  },
  /** VS Code's log folder of this run: every output channel's file is under it. */
  get vscodeLogs(): string {
    return required('MCP_HOST_VSCODE_LOGS');
  },
};
