import * as vscode from 'vscode';
import type { CreateMessageParams, InputDefinition, LaunchSummary, ShownText, Tool } from '../core';
import { windowAppPrompts, type AppPrompts } from './apps/appPanels';
import { askWithModal, type ConsentAnswer } from './consent';
import type { DocumentActions } from './documentActions';
import { LazyElicitationUi, type ElicitationUi } from './elicitation/ui';
import { askConsent, pickModelWithQuickPick, reviewInEditor, type SamplingDecision } from './sampling/prompts';
import { notify, type Severity } from './notifications';
import { askToReuse, askWithInputBox, type ReuseAnswer } from './secrets';
import { windowUi, type SetupUi } from './setup/ui';
import { askCancelOrBackground, confirmWithModal } from './tools/callTool';

export type ToolConfirmation = 'once' | 'always' | 'cancel';

/**
 * Every question the extension asks the person, in one place. The host and its parts get this
 * object in their constructors and ask through it at the moment they ask, so a test in a real
 * VS Code (which reaches it through the test seam, see `extension.ts`) answers by replacing one
 * of its methods; nothing else of the host is replaced from outside.
 */
export interface HostUi {
  /** The first start of a workspace-defined server: what runs or where requests go. */
  allowLaunch(launch: LaunchSummary): Promise<ConsentAnswer>;
  /** A value for `${input:ID}`; undefined when the person gives none. */
  askInput(id: string, definition: InputDefinition | undefined): Promise<string | undefined>;
  /** `server` wants the value stored for `${input:id}`, which was first given to `firstGivenTo`. */
  allowInputReuse(server: string, id: string, firstGivenTo: string): Promise<ReuseAnswer>;
  /** Running a tool that is not (trusted to be) read-only. */
  confirmTool(server: string, tool: Tool, args: Record<string, unknown>, annotationsTrusted: boolean): Promise<ToolConfirmation>;
  /** The progress notification's Cancel, for a call that runs as a task: cancel it, or let it run on. */
  cancelOrBackground(server: string, tool: Tool): Promise<'cancel' | 'background'>;
  /** How a call's ending is told, with actions such as Open Result; the action chosen. */
  announceCall(severity: 'info' | 'error', message: ShownText, ...actions: string[]): Thenable<string | undefined>;
  /** Any other notification (a command that failed, a server that would not start); the action chosen. */
  notify(severity: Severity, message: ShownText, ...actions: string[]): Thenable<string | undefined>;
  /** A server's `sampling/createMessage`, as it will be sent. */
  allowSampling(server: string, params: CreateMessageParams): Promise<SamplingDecision>;
  /** Several allowed models fit the request equally well. */
  pickSamplingModel(models: vscode.LanguageModelChat[]): Promise<vscode.LanguageModelChat | undefined>;
  /** Review…: the person may edit the messages; undefined is a refusal. */
  reviewSampling(server: string, params: CreateMessageParams): Promise<CreateMessageParams | undefined>;
  /** The questions of `elicitation/create` and -32042. */
  elicitation: ElicitationUi;
  /** The questions of Add, Import and Remove Server. */
  setup: SetupUi;
  /** What an MCP App asks for or says: browser permissions, messages for a chat, a download's place. */
  apps: AppPrompts;
}

/** The real questions: VS Code's modals, quick inputs and editors. One per activation. */
export function createWindowUi(documentActions: DocumentActions): HostUi {
  return {
    allowLaunch: askWithModal,
    askInput: askWithInputBox,
    allowInputReuse: askToReuse,
    confirmTool: confirmWithModal,
    cancelOrBackground: askCancelOrBackground,
    announceCall: notify,
    notify,
    allowSampling: askConsent,
    pickSamplingModel: pickModelWithQuickPick,
    reviewSampling: (server, params) => reviewInEditor(documentActions, server, params),
    elicitation: new LazyElicitationUi(),
    setup: windowUi,
    apps: windowAppPrompts,
  };
}
