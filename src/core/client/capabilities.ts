import type { ClientRequestMethod } from '../protocol/methods';
import type { ServerCapabilities } from '../protocol/types';

/** Which server capability each client→server method needs; methods not listed need none. */
const REQUIRED: Partial<Record<ClientRequestMethod, { capability: string; test: (c: ServerCapabilities) => boolean }>> = {
  'tools/list': { capability: 'tools', test: (c) => !!c.tools },
  'tools/call': { capability: 'tools', test: (c) => !!c.tools },
  'resources/list': { capability: 'resources', test: (c) => !!c.resources },
  'resources/templates/list': { capability: 'resources', test: (c) => !!c.resources },
  'resources/read': { capability: 'resources', test: (c) => !!c.resources },
  'resources/subscribe': { capability: 'resources.subscribe', test: (c) => !!c.resources?.subscribe },
  'resources/unsubscribe': { capability: 'resources.subscribe', test: (c) => !!c.resources?.subscribe },
  'prompts/list': { capability: 'prompts', test: (c) => !!c.prompts },
  'prompts/get': { capability: 'prompts', test: (c) => !!c.prompts },
  'completion/complete': { capability: 'completions', test: (c) => !!c.completions },
  'logging/setLevel': { capability: 'logging', test: (c) => !!c.logging },
  'tasks/list': { capability: 'tasks.list', test: (c) => !!c.tasks?.list },
  'tasks/cancel': { capability: 'tasks.cancel', test: (c) => !!c.tasks?.cancel },
};

/** The capability `method` needs that `capabilities` lacks, or undefined if it may be sent. */
export function missingCapability(method: ClientRequestMethod, capabilities: ServerCapabilities): string | undefined {
  const rule = REQUIRED[method];
  return rule && !rule.test(capabilities) ? rule.capability : undefined;
}
