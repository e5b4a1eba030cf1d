/**
 * The organisation's managed policy file (../core/gateway/managedPolicy.ts) as the command line
 * applies it, to the one-server verbs and to `serve` alike: VS Code's MCP lists decide whether a
 * server may be used at all (each server of a `--config` file on its own), and the locked settings
 * override the flags and variables that would loosen them (the fence, the sandbox default, the
 * audit file, the OTLP endpoint, the flow guard, whether a lock file may accept a flagged tool).
 */
import * as path from 'node:path';
import { managedSetting, readManagedPolicy, vscodeMcpPolicyOf, VSCODE_MCP_POLICIES } from '../core/gateway/managedPolicy';
import { orgVerdict, type ServerIdentity } from '../core/gateway/orgPolicy';
import { flowGuardSettingOf, type FlowMode } from '../core/scan/flowGuard';
import type { SandboxDefault } from '../core/servers/sandbox/defaults';

/** The flags a lock acts on; `audit` is set to the organisation's file where it locks one. */
export interface LockedFlags {
  fence?: string;
  audit?: string;
  flowGuard?: string;
}

/** Why the organisation keeps a server out: VS Code's policy that does, and the file it was read from. */
export interface KeptOut {
  /** `ChatMCP` turns every server off; the others name a list. */
  policy: string;
  file: string;
}

export interface Organisation {
  /** `on`: fenced whatever the flags say (the current folder as the root without `--root`); `off`: never; `flags`: as they say. */
  fence: 'on' | 'off' | 'flags';
  /** The sandbox default the organisation locks (`all`: every stdio server; `workspace`: every server a file of a project defines). */
  sandbox?: SandboxDefault;
  /** The environment telemetry is read from: the organisation's endpoint over the variables. */
  env: NodeJS.ProcessEnv;
  /** The flow guard's mode for agents, where the organisation locks it. */
  flowGuard?: FlowMode;
  /** False where the organisation keeps changed and flagged definitions from being accepted (`McpHostPinsAcceptChanges`). */
  acceptChanges: boolean;
  /** Whether VS Code's MCP lists keep this server out, and by which policy. */
  keptOut(identity: ServerIdentity): KeptOut | undefined;
}

/** The sentence a server kept out gets: `subject` is "this server" or `the server "notes"`. */
export function keptOutMessage(kept: KeptOut, subject: string): string {
  return kept.policy === VSCODE_MCP_POLICIES.access
    ? `your organisation's policy turns MCP servers off (${kept.policy}, ${kept.file})`
    : `your organisation's policy does not allow ${subject} (${kept.policy}, ${kept.file})`;
}

const SANDBOX_DEFAULTS: readonly SandboxDefault[] = ['off', 'workspace', 'all'];

/**
 * Reads the managed file (`file`: a test's stand-in; the shipped CLI reads the platform's) and
 * applies its locks to `flags`; a string when a flag asks for what the organisation forbids (exit 2).
 */
export function organisationFor(flags: LockedFlags, err: NodeJS.WritableStream, file?: string): Organisation | string {
  const managed = readManagedPolicy(file);
  if (managed.problem) err.write(`warning: ${managed.problem}; it locks nothing\n`);
  const where = managed.file;
  const fence = managedSetting(managed, 'mcpHost.roots.fence');
  if ((fence === 'block' || fence === 'ask') && flags.fence === 'off')
    return `--fence off: your organisation keeps the fence on (McpHostRootsFence, ${where})`;
  const auditFile = managedSetting(managed, 'mcpHost.audit.file');
  if (typeof auditFile === 'string' && auditFile.trim()) {
    if (flags.audit !== undefined && path.resolve(flags.audit) !== path.resolve(auditFile))
      return `--audit: your organisation's audit file is ${auditFile} (McpHostAuditFile, ${where})`;
    flags.audit = auditFile;
  }
  // A headless guard cannot ask: the organisation's `ask` or `block` is `block`, and `--flow-guard off` cannot loosen it.
  const flow = flowGuardSettingOf(managedSetting(managed, 'mcpHost.flowGuard'))?.agents;
  if (flow !== undefined && flow !== 'off' && (flags.flowGuard === 'off' || flags.flowGuard === 'warn'))
    return `--flow-guard ${flags.flowGuard}: your organisation keeps the flow guard on for agents (McpHostFlowGuard, ${where})`;
  let env: NodeJS.ProcessEnv = process.env;
  const endpoint = managedSetting(managed, 'mcpHost.telemetry.endpoint');
  if (typeof endpoint === 'string' && endpoint.trim()) {
    // The organisation's collector, whatever the variables say: they may add headers, not turn it off or move it.
    const { OTEL_SDK_DISABLED: _off, OTEL_TRACES_EXPORTER: _t, OTEL_LOGS_EXPORTER: _l, OTEL_METRICS_EXPORTER: _m, ...rest } = process.env;
    env = { ...rest, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint };
    for (const signal of ['TRACES', 'LOGS', 'METRICS']) delete env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`];
    const protocol = managedSetting(managed, 'mcpHost.telemetry.protocol');
    if (typeof protocol === 'string') env.OTEL_EXPORTER_OTLP_PROTOCOL = protocol;
    const content = managedSetting(managed, 'mcpHost.telemetry.exportContent');
    if (typeof content === 'boolean') env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT = String(content);
  }
  const sandbox = managedSetting(managed, 'mcpHost.sandbox.default');
  const lists = vscodeMcpPolicyOf(managed);
  return {
    fence: fence === 'block' || fence === 'ask' ? 'on' : fence === 'off' ? 'off' : 'flags',
    sandbox: SANDBOX_DEFAULTS.find((s) => s === sandbox),
    env,
    flowGuard: flow,
    acceptChanges: managedSetting(managed, 'mcpHost.pins.acceptChanges') !== false,
    keptOut: (identity) => {
      if (!lists) return undefined;
      if (!lists.access) return { policy: VSCODE_MCP_POLICIES.access, file: where };
      const verdict = orgVerdict(identity, lists.allowed, lists.denied);
      if (verdict.allowed) return undefined;
      return { policy: verdict.why === 'denied' ? VSCODE_MCP_POLICIES.deniedServers : VSCODE_MCP_POLICIES.allowedServers, file: where };
    },
  };
}
