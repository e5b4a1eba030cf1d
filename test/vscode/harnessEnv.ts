// Shared by the extension-host suites (test/vscode/*.test.ts). Not a suite itself: only *.test.ts
// files are picked up. The harness sets these variables through the smoke-test driver's
// extensionEnvironment; see test/harness/run-vscode-tests.js.
import * as vscode from 'vscode';

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run these suites through test/harness/run-vscode-tests.js`);
  return v;
}

export const env = {
  /** The repository root (package.json, node_modules). */
  get repo(): string { return required('MCP_HOST_REPO'); },
  /** The scratch copy of test/vscode/workspace opened as the workspace folder. */
  get workspace(): string { return required('MCP_HOST_WORKSPACE'); },
  /** Absolute path of @modelcontextprotocol/server-everything's dist/index.js (run it with `stdio`). */
  get everythingServer(): string { return required('MCP_HOST_EVERYTHING_SERVER'); },
  /** A scratch folder the suites may write to (kept after the run for inspection). */
  get out(): string { return required('MCP_HOST_TEST_OUT'); },
  /** VS Code's log folder of this run: every output channel's file is under it. */
  get vscodeLogs(): string { return required('MCP_HOST_VSCODE_LOGS'); },
};

/** Polls fn until it returns a truthy value, or throws after timeoutMs. */
export async function waitFor<T>(fn: () => T | Promise<T>, timeoutMs = 20_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The extension under test, activated. */
export async function activateExtension(id: string): Promise<vscode.Extension<unknown>> {
  const ext = vscode.extensions.getExtension(id);
  if (!ext) throw new Error(`extension ${id} is not installed`);
  await ext.activate();
  return ext;
}
