import type { FlowFinding } from '../../core/scan/flowGuard';
import type { ScanFinding } from '../../core/scan/detectors';
import type * as vscode from 'vscode';
import type { AppPermission, FencedPath, GatedMethod, PropertySpec, Tool } from '../../core';
import type { AskReason } from '../../core/policy/gate';

// The answers to the person's questions (`HostUi`, ../ui/hostUi.ts), in a leaf file: the parts that ask
// and the parts that answer both name them without importing each other.

/** Starting a workspace-defined server. */
export type ConsentAnswer = 'allow' | 'always' | 'cancel';

/** A stored `${input:ID}` value asked for by another server than the one it was given to. */
export type ReuseAnswer = 'allow' | 'new' | 'cancel';

/** A server's sampling request. */
export type SamplingDecision = 'once' | 'always' | 'deny' | 'review';

/** Running a tool that is not (trusted to be) read-only. */
export type ToolConfirmation = 'once' | 'always' | 'cancel';

/** How Call Tool takes a tool's arguments: one input per argument, or the whole object as JSON in an editor. */
export type ArgumentEntry = 'steps' | 'json';

/** One argument of a tool's input schema, asked in turn (Call Tool step by step, Edit and Run Again). */
export interface ArgumentStep {
  /** The server and the tool, and which argument of how many. */
  title: string;
  spec: PropertySpec;
  /** The value given before (Back, or the call being edited), else undefined: the schema's default is offered then. */
  current: unknown;
  canGoBack: boolean;
}

/** A value (parsed and checked against its schema), 'skip' (an optional one left out), 'back', or undefined: the call is cancelled. */
export type ArgumentAnswer = { value: unknown } | 'skip' | 'back' | undefined;

/** Who wants the tool run: the person (Call Tool) or the server's own app (its tools/call). */
export type ToolAsker = 'person' | 'app';

/** The questions the app policy asks the person: `HostUi.apps`. */
export interface AppPrompts {
  grant(server: string, asked: AppPermission[]): Promise<AppPermission[]>;
  /** ui/message and ui/update-model-context: shown with a Copy button. */
  show(server: string, kind: 'message' | 'modelContext', text: string): void;
  saveLocation(server: string, suggested: string): Promise<vscode.Uri | undefined>;
}

/**
 * A request that names paths outside the roots, asked about in one modal: each path, the roots,
 * and, for a tool that also needs its confirmation, that confirmation (the only thing "always" keeps).
 */
export interface OutsideRootsQuestion {
  server: string;
  asker: ToolAsker;
  method: GatedMethod;
  /** The tool or prompt name, or the resource URI. */
  name: string;
  findings: FencedPath[];
  /** Paths in the arguments of a tool that may change things that name files that run later (git hooks, editor and agent settings, shell files). */
  protectedFindings?: FencedPath[];
  /** The roots' URIs, as `roots/list` answers them. */
  roots: string[];
  tool?: { tool: Tool; args: Record<string, unknown>; annotationsTrusted: boolean };
}

/** A tool or prompt whose definition changed since the person approved it (`HostUi.confirmChangedDefinition`, `acceptDefinitionChanges`). */
export interface ChangedDefinition {
  kind: 'tools' | 'prompts' | 'instructions';
  name: string;
  /** The members that differ: `description`, `inputSchema`, `annotations`, … */
  changed: string[];
  /** What MCP Host's scan found in it that the person has not accepted yet. */
  findings?: readonly ScanFinding[];
}

/** A call of a suspended tool (or get of a suspended prompt): run it this once, review the change first, or cancel. */
export type ChangedDefinitionAnswer = 'once' | 'review' | 'cancel';

/** One of the chat's calls the flow guard holds (`HostUi.confirmFlow`): what it is, and what came before it. */
export interface FlowQuestion {
  server: string;
  tool: string;
  args: Record<string, unknown>;
  finding: FlowFinding;
}

/**
 * A request of an agent connected to the gateway that needs the person (`HostUi.allowAgentRequest`):
 * every reason at once (its first use of the server, paths outside the roots, a changed definition,
 * MCP Host's own confirmation of the tool), naming the agent.
 */
export interface AgentQuestion {
  /** The agent as its client names itself (a known agent's name, else the client's own). */
  agent: string;
  server: string;
  method: GatedMethod;
  /** The tool or prompt name, or the resource URI. */
  name: string;
  arguments?: Record<string, unknown>;
  reasons: AskReason[];
  /** The roots' URIs, for a path outside them. */
  roots: string[];
}
