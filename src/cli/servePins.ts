/**
 * What `serve` holds a server's definitions to: its `--pinned` lock file (a tool or prompt that
 * changed since is suspended; one the file does not have is refused), and the definition scan
 * (../core/scan/detectors.ts), run on every tool as first listed with the other servers' tool
 * names (shadowing). A tool the scan flags is suspended as a changed one is: withheld from the
 * agent's `tools/list`, its call by name refused with an `isError` result, audited once as a
 * `definition-flagged` record. `serve` has nobody to ask, so a person accepts a flagged tool the
 * way they accept a change: by reviewing it (`mcp-host … scan` shows the findings) and pinning it
 * (`mcp-host … pin FILE`, then `serve --pinned FILE`): a lock file that holds the tool's exact
 * definition is that review, unless the organisation keeps changes from being accepted
 * (`McpHostPinsAcceptChanges`).
 */
import type { AskReason, GateRequest } from '../core/policy/gate';
import { compareOne, definitionRecord, describeChange, pinOf, pinPrompt, pinTool, type PinSet, type PinStatus } from '../core/policy/pins';
import type { AuditedServer, AuditSink } from '../core/policy/types';
import type { Prompt, Tool } from '../core/protocol/types';
import { flaggedMember, isFlaggedMember, scanTool, type ScanFinding } from '../core/scan/detectors';

export interface ServePinsOptions {
  /** The server's `--pinned` lock file, if it has one. */
  lock?: { set: PinSet; file: string };
  /** The other servers' tool names (name → server), for the shadowing detector; read when a tool is first scanned. */
  otherTools(): ReadonlyMap<string, string>;
  /** Whether a lock file that pins a flagged tool's exact definition accepts it. */
  acceptFlagged: boolean;
  audit?: AuditSink;
  audited(): AuditedServer;
}

export class ServePins {
  /** What the scan found in each tool as listed (each listing brings new objects, scanned once). */
  private readonly scanned = new WeakMap<Tool, readonly ScanFinding[]>();
  /** The flagged definitions audited already (name and hash): each is recorded once. */
  private readonly recorded = new Set<string>();

  constructor(private readonly options: ServePinsOptions) {}

  get lockFile(): string | undefined {
    return this.options.lock?.file;
  }

  /** How a tool compares with what the person accepted: its pin, and the scan's findings; undefined when nothing holds it. */
  tool(tool: Tool): PinStatus | undefined {
    const { lock } = this.options;
    const pinned = lock && compareOne(pinOf(lock.set, 'tools', tool.name), pinTool(tool));
    if (pinned?.status === 'changed' || pinned?.status === 'removed') return pinned;
    const findings = this.findings(tool);
    if (!findings.length || (this.options.acceptFlagged && pinned?.status === 'same')) return pinned;
    const key = `${tool.name}\u0000${pinTool(tool).sha256}`;
    if (!this.recorded.has(key)) {
      this.recorded.add(key);
      this.options.audit?.append(
        definitionRecord('definition-flagged', this.options.audited(), {
          kind: 'tools',
          name: tool.name,
          now: pinTool(tool).sha256,
          changed: findings.map(flaggedMember),
          findings,
        }),
      );
    }
    return { status: 'changed', changed: findings.map(flaggedMember) };
  }

  /** How a prompt compares with its pin; undefined without a lock file (the scan suspends tools only, as the editor's does). */
  prompt(prompt: Prompt): PinStatus | undefined {
    const { lock } = this.options;
    return lock && compareOne(pinOf(lock.set, 'prompts', prompt.name), pinPrompt(prompt));
  }

  /** What a refusal of a suspended tool or prompt says: what is wrong with it, and how a person allows it. */
  refusal(request: GateRequest, reason: Extract<AskReason, { kind: 'definitionChanged' }>): string {
    const what =
      request.method === 'tools/call'
        ? `the tool ${request.tool.name}`
        : request.method === 'prompts/get'
          ? `the prompt ${request.name}`
          : 'it';
    const lock = this.options.lock?.file;
    if (reason.changed.every(isFlaggedMember)) {
      const found = reason.changed.map((m) => m.slice('flagged: '.length)).join('; ');
      if (!this.options.acceptFlagged)
        return `${what} was flagged by MCP Host's scan (${found}); your organisation keeps flagged definitions from being accepted (McpHostPinsAcceptChanges)`;
      return (
        `${what} was flagged by MCP Host's scan (${found}); it is offered to no agent until a person reviews it ` +
        `(mcp-host … scan) and pins it (mcp-host … pin FILE, then serve --pinned ${lock ?? 'FILE'})`
      );
    }
    return (
      `${what} changed since it was pinned in ${lock ?? 'the lock file'} (${describeChange(reason.changed)}); ` +
      'review the change, then pin the server again (mcp-host … pin FILE) to allow it'
    );
  }

  private findings(tool: Tool): readonly ScanFinding[] {
    let found = this.scanned.get(tool);
    if (!found) this.scanned.set(tool, (found = scanTool(tool, { otherTools: this.options.otherTools() })));
    return found;
  }
}
