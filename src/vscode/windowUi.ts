import { windowAppPrompts } from './apps/appPanels';
import { askWithModal } from './policy/consent';
import { askWithoutSandbox } from './policy/sandboxFallback';
import type { DocumentActions } from './window/documentActions';
import { LazyElicitationUi } from './elicitation/ui';
import { askOutsideRoots } from './policy/gate';
import { askAgentRequest } from './agents/agentQuestion';
import { askAcceptChanges, askChangedDefinition } from './policy/pinReview';
import { askFlowQuestion } from './gateway/chatFlow';
import { askConsent, pickModelWithQuickPick, reviewInEditor } from './sampling/prompts';
import { askToReuse, askWithInputBox } from './policy/secrets';
import { askHeadersWithInputBox } from './policy/telemetry';
import { windowUi } from './ui/setupUi';
import { windowArgumentInput } from './tools/argumentInput';
import { askCancelOrBackground, confirmWithModal } from './tools/callTool';
import type { Redact } from '../core';
import type { HostUi } from './ui/hostUi';
import { notify } from './window/notifications';
import { askSaveLocation } from './window/windowInputs';

/**
 * The real questions: VS Code's modals, quick inputs and editors. One per activation. `redact` is
 * the host's (the secrets of every server it resolved), for the server text they show.
 */
export function createWindowUi(documentActions: DocumentActions, redact: Redact): HostUi {
  return {
    ...windowArgumentInput(redact),
    allowLaunch: (launch) => askWithModal(launch, redact),
    startWithoutSandbox: (reason, servers) => askWithoutSandbox(reason, servers, redact),
    askInput: askWithInputBox,
    allowInputReuse: (server, id, firstGivenTo) => askToReuse(server, id, firstGivenTo, redact),
    confirmTool: (server, tool, args, trusted, asker) => confirmWithModal(server, tool, args, trusted, asker, redact),
    allowOutsideRoots: (question) => askOutsideRoots(question, redact),
    allowAgentRequest: (question) => askAgentRequest(question, redact),
    confirmChangedDefinition: (server, change) => askChangedDefinition(server, change, redact),
    acceptDefinitionChanges: (server, changes) => askAcceptChanges(server, changes, redact),
    confirmFlow: (question) => askFlowQuestion(question, redact),
    cancelOrBackground: (server, tool) => askCancelOrBackground(server, tool, redact),
    announceCall: notify,
    notify,
    allowSampling: (server, params, masked) => askConsent(server, params, masked, redact),
    pickSamplingModel: pickModelWithQuickPick,
    reviewSampling: (server, params, masked) => reviewInEditor(documentActions, server, params, masked, redact),
    saveLocation: async (suggested, filters) => askSaveLocation({ defaultUri: suggested, filters }),
    askTelemetryHeaders: askHeadersWithInputBox,
    elicitation: new LazyElicitationUi(redact),
    setup: windowUi,
    apps: windowAppPrompts(redact),
  };
}
