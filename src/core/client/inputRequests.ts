import { REQUEST_CANCELLED } from '../jsonrpc/connection';
import { McpError } from '../protocol/errors';
import type { CreateMessageParams, CreateMessageResult, ElicitRequestParams, ElicitResult, InputRequest, Root } from '../protocol/types';

/** The host's answers to what a server may ask of it, in either era (ClientHandlers has them too). */
export interface InputHandlers {
  listRoots?(signal: AbortSignal): Root[] | Promise<Root[]>;
  createMessage?(params: CreateMessageParams, signal: AbortSignal): Promise<CreateMessageResult>;
  elicit?(params: ElicitRequestParams, signal: AbortSignal): Promise<ElicitResult>;
}

/** Input requests one `input_required` result may carry; a server that needs more asks in further rounds. */
export const MAX_INPUT_REQUESTS_PER_ROUND = 16;

/** The methods a stateless server may put in `inputRequests`, each answered by the handler the legacy era uses for the same server request. */
const INPUT_METHODS = ['elicitation/create', 'sampling/createMessage', 'roots/list'] as const;

/**
 * Answers the `inputRequests` of one `input_required` result with the host's handlers: the same
 * sampling, elicitation and roots code (and so the same consent, policy and history) that answers
 * those requests when a 2025-era server sends them. One at a time, so the person never faces two
 * questions at once. A request the host declared no handler for fails the whole call: the server
 * asked for a capability we never declared. So does a handler that fails (the person refused a
 * sampling request, say): inputResponses have no room for an error, so there is nothing to send
 * the server; the error keeps its code and says which request of which call it was. Cancelling
 * (`signal`) ends the wait at once, also for a handler that does not listen to it.
 */
export async function answerInputRequests(
  requests: unknown,
  handlers: InputHandlers,
  signal: AbortSignal,
  method = 'the request',
): Promise<Record<string, unknown>> {
  if (requests === undefined) return {};
  if (!requests || typeof requests !== 'object' || Array.isArray(requests))
    throw McpError.internal('The server sent inputRequests that are not an object', { inputRequests: requests });
  const entries = Object.entries(requests as Record<string, InputRequest>);
  // Each one may be a question to the person: a server may not queue up dozens of them at once.
  if (entries.length > MAX_INPUT_REQUESTS_PER_ROUND) {
    throw McpError.invalidRequest(
      `${method}: the server asked for ${entries.length} inputs in one round; MCP Host answers at most ${MAX_INPUT_REQUESTS_PER_ROUND}, so the call was stopped`,
    );
  }
  const responses: Record<string, unknown> = {};
  for (const [key, request] of entries) {
    if (signal.aborted) throw cancelled(signal);
    try {
      responses[key] = await untilAborted(answerOne(request, handlers, signal), signal);
    } catch (error) {
      if (signal.aborted) throw cancelled(signal);
      const e = McpError.from(error);
      throw new McpError(
        e.code,
        `${method}: the server's input request '${key}' (${String(request?.method)}) failed, so the call was stopped: ${e.message}`,
        e.data,
        e.kind,
      );
    }
  }
  return responses;
}

function cancelled(signal: AbortSignal): McpError {
  return signal.reason instanceof McpError ? signal.reason : new McpError(REQUEST_CANCELLED, 'Request cancelled');
}

function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function answerOne(request: InputRequest, handlers: InputHandlers, signal: AbortSignal): Promise<unknown> {
  const method = request?.method;
  const undeclared = (capability: string) =>
    McpError.invalidRequest(`MCP Host did not declare the '${capability}' capability`, { capability });
  switch (method) {
    case 'elicitation/create':
      if (!handlers.elicit) throw undeclared('elicitation');
      return handlers.elicit((request.params ?? {}) as unknown as ElicitRequestParams, signal);
    case 'sampling/createMessage':
      if (!handlers.createMessage) throw undeclared('sampling');
      return handlers.createMessage((request.params ?? {}) as unknown as CreateMessageParams, signal);
    case 'roots/list':
      if (!handlers.listRoots) throw undeclared('roots');
      return { roots: await handlers.listRoots(signal) };
    default:
      throw McpError.invalidRequest(`only ${INPUT_METHODS.join(', ')} are allowed`);
  }
}
