import type { ServerDefinition } from '../definition';

/** `mcpHost.sandbox.default`: which servers run sandboxed unless their entry says otherwise. */
export type SandboxDefault = 'off' | 'workspace' | 'all';

/**
 * The definition as it will run: its own `sandboxEnabled`, else the person's default (`workspace`:
 * every server a workspace or folder defines; `all`: every stdio server). Where the default would
 * sandbox it, `sandboxByDefault` says so, so that a workspace's own `"sandboxEnabled": false` counts
 * as a loosening the launch consent shows (`policyGrant`).
 */
export function withSandboxDefault(def: ServerDefinition, mode: SandboxDefault): ServerDefinition {
  if (def.type !== 'stdio') return def;
  const byDefault = mode === 'all' || (mode === 'workspace' && def.origin.scope !== 'user');
  if (!byDefault) return def;
  return { ...def, sandboxEnabled: def.sandboxEnabled ?? true, sandboxByDefault: true };
}
