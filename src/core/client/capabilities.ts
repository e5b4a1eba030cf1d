import { traitsOf, type ClientRequestMethod, type ServerCapabilityPath } from '../protocol/methods';
import type { ServerCapabilities } from '../protocol/types';

/** Whether the server declared the capability at `path` (any value but absent, false or null). */
function declares(capabilities: ServerCapabilities, path: ServerCapabilityPath): boolean {
  let value: unknown = capabilities;
  for (const key of path.split('.')) value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return !!value;
}

/** The capability `method` needs (its `requires` in protocol/methods.ts) that `capabilities` lacks, or undefined if it may be sent. */
export function missingCapability(method: ClientRequestMethod, capabilities: ServerCapabilities): string | undefined {
  const required = traitsOf(method)?.requires;
  return required && !declares(capabilities, required) ? required : undefined;
}
