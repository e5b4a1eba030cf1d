import type * as vscode from 'vscode';
import type { CreateMessageParams, InputDefinition, LaunchSummary, ShownText, Tool } from '../../core';
import type { MaskFinding } from '../../core/policy/types';
import type {
  AgentQuestion,
  AppPrompts,
  ArgumentAnswer,
  ArgumentEntry,
  ArgumentStep,
  ChangedDefinition,
  ChangedDefinitionAnswer,
  ConsentAnswer,
  FlowQuestion,
  OutsideRootsQuestion,
  ReuseAnswer,
  SamplingDecision,
  ToolAsker,
  ToolConfirmation,
} from '../common/answers';
import type { ElicitationUi } from './elicitationSteps';
import type { Severity } from '../window/notifications';
import type { SetupUi } from './setupUi';

/**
 * Every question the extension asks the person, in one place. The host and its parts get this
 * object in their constructors and ask through it at the moment they ask, so a test in a real
 * VS Code (which reaches it through the test seam, see `extension.ts`) answers by replacing one
 * of its methods; nothing else of the host is replaced from outside. Types only: the window's
 * implementation is `windowUi.ts`, which only `extension.ts` imports, so no part that asks imports
 * the parts that answer.
 */
export interface HostUi {
  /** The first start of a workspace-defined server: what runs or where requests go. */
  allowLaunch(launch: LaunchSummary): Promise<ConsentAnswer>;
  /** `mcpHost.sandbox.default` would sandbox `servers` on a machine without a sandbox (`reason`): start them unsandboxed? undefined when dismissed. */
  startWithoutSandbox(reason: string, servers: string[]): Promise<'unsandboxed' | 'refuse' | undefined>;
  /** A value for `${input:ID}`; undefined when the person gives none, or `token` closed the question (its start was abandoned). */
  askInput(id: string, definition: InputDefinition | undefined, token?: vscode.CancellationToken): Promise<string | undefined>;
  /** `server` wants the value stored for `${input:id}`, which was first given to `firstGivenTo`. */
  allowInputReuse(server: string, id: string, firstGivenTo: string): Promise<ReuseAnswer>;
  /** Running a tool that is not (trusted to be) read-only, for the person or at the request of an MCP App of the server. */
  confirmTool(
    server: string,
    tool: Tool,
    args: Record<string, unknown>,
    annotationsTrusted: boolean,
    asker: ToolAsker,
  ): Promise<ToolConfirmation>;
  /** A call of a tool (or get of a prompt) whose definition changed since the person approved it: what changed, and Review Changes. */
  confirmChangedDefinition(server: string, change: ChangedDefinition): Promise<ChangedDefinitionAnswer>;
  /** The flow guard holds one of the chat's calls (untrusted content came before it in the conversation): run it anyway? */
  confirmFlow(question: FlowQuestion): Promise<'run' | 'cancel'>;
  /** Review Changes, with the diff editor open beside it: accept the new definitions, or keep them suspended. */
  acceptDefinitionChanges(server: string, changes: ChangedDefinition[]): Promise<'accept' | 'keep'>;
  /** Call Tool on a tool that takes arguments: how the person gives them; undefined cancels the call. */
  pickArgumentEntry(server: string, tool: Tool): Promise<ArgumentEntry | undefined>;
  /** One argument of a tool about to be called (Call Tool step by step, Edit and Run Again); undefined cancels the call. */
  askArgument(step: ArgumentStep): Promise<ArgumentAnswer>;
  /** A request of a connected agent that needs the person: "Allow" runs it (and lets that agent use the server from now on); Cancel sends nothing. */
  allowAgentRequest(question: AgentQuestion): Promise<'allow' | 'cancel'>;
  /** A request whose arguments (or URI) name paths outside the roots, under `mcpHost.roots.fence` "ask"; Cancel sends nothing. */
  allowOutsideRoots(question: OutsideRootsQuestion): Promise<ToolConfirmation>;
  /** The progress notification's Cancel, for a call that runs as a task: cancel it, or let it run on. */
  cancelOrBackground(server: string, tool: Tool): Promise<'cancel' | 'background'>;
  /** How a call's ending is told, with actions such as Open Result; the action chosen. */
  announceCall(severity: 'info' | 'error', message: ShownText, ...actions: string[]): Thenable<string | undefined>;
  /** Any other notification (a command that failed, a server that would not start); the action chosen. */
  notify(severity: Severity, message: ShownText, ...actions: string[]): Thenable<string | undefined>;
  /** A server's `sampling/createMessage`, as it will be sent (masked: `masked` says what was replaced). */
  allowSampling(server: string, params: CreateMessageParams, masked: MaskFinding[]): Promise<SamplingDecision>;
  /** Several allowed models fit the request equally well. */
  pickSamplingModel(models: vscode.LanguageModelChat[]): Promise<vscode.LanguageModelChat | undefined>;
  /** Review…: the person may edit the (masked) messages; undefined is a refusal. `masked` is shown: which kinds, how many. */
  reviewSampling(server: string, params: CreateMessageParams, masked: MaskFinding[]): Promise<CreateMessageParams | undefined>;
  /** Where to save a file MCP Host writes for the person (Export Audit Log…); undefined when they cancel. */
  saveLocation(suggested: vscode.Uri, filters?: Record<string, string[]>): Promise<vscode.Uri | undefined>;
  /**
   * The headers sent with every telemetry export (a collector's token), as `Name=value` pairs
   * separated by commas; `names` are the ones kept now (their values are never shown). An empty
   * answer removes them; undefined when the person cancels.
   */
  askTelemetryHeaders(names: string[]): Promise<string | undefined>;
  /** The questions of `elicitation/create` and -32042. */
  elicitation: ElicitationUi;
  /** The questions of Add, Import and Remove Server. */
  setup: SetupUi;
  /** What an MCP App asks for or says: browser permissions, messages for a chat, a download's place. */
  apps: AppPrompts;
}
