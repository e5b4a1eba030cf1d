import type * as vscode from 'vscode';
import type { ServerDefinition, ServerState } from '../core';

/**
 * What another extension gets from `vscode.extensions.getExtension('mcp-host.mcp-host')?.exports`
 * (docs/api.md). Read only on purpose: the servers run on the person's
 * consent, so starting, stopping or calling them stays with the person's own commands.
 */
export interface McpHostApi {
  /** Grows only by additions while it is 1. */
  readonly apiVersion: 1;
  /**
   * The servers of the settings that may run here, in settings order: not those Workspace Trust
   * blocks, nor entries with errors.
   */
  servers(): ServerStatus[];
  /** Fires when a server was added or removed or its state changed, and on other changes of the host: read `servers()` again. */
  readonly onDidChangeServers: vscode.Event<void>;
}

export interface ServerStatus {
  name: string;
  /** Where the definition comes from. */
  scope: ServerDefinition['origin']['scope'];
  state: ServerState['kind'];
  /** Why it stopped, for `error`, without secrets. */
  message?: string;
}

/** What the public API is computed from: the host's servers and its change event. */
export interface ServerSource {
  readonly servers: ReadonlyArray<{ readonly definition: ServerDefinition; readonly state: ServerState }>;
  readonly onDidChange: vscode.Event<void>;
  redact(text: string): string;
}

export function createApi(host: ServerSource): McpHostApi {
  return {
    apiVersion: 1,
    servers: () =>
      host.servers.map(({ definition, state }) => ({
        name: definition.name,
        scope: definition.origin.scope,
        state: state.kind,
        ...(state.kind === 'error' ? { message: host.redact(state.message) } : {}),
      })),
    onDidChangeServers: host.onDidChange,
  };
}

/**
 * The environment variable the test harness (`test/harness/`) sets for the extension host. Only
 * then, and only in a test build (`node esbuild.js --test-seam`, which the harness installs), do the
 * exports carry `testing`, the host's internals that suites in a real VS Code drive. A release
 * build is `'release'` here at bundle time, so the seam is not even in its bundle: no environment
 * of a person's VS Code can switch it on, and no other extension can come to depend on it.
 */
export const TEST_SEAM_ENV = 'MCP_HOST_TEST_SEAM';

export function extensionExports<T>(api: McpHostApi, internals: T, env: NodeJS.ProcessEnv): McpHostApi | (McpHostApi & { testing: T }) {
  return env[TEST_SEAM_ENV] === '1' ? { ...api, testing: internals } : api;
}
