/** The flow guard's labels of a tool (./flowGuard.ts), apart so a server definition can name them without importing the guard. */
export type FlowLabel = 'untrusted' | 'private' | 'sink';

export const FLOW_LABELS: readonly FlowLabel[] = ['untrusted', 'private', 'sink'];

/**
 * A server entry's `flowLabels`: per tool name (or `*` for the others), exactly the labels it has;
 * `resources/read` for every resource read of the server, `prompts/get` for every prompt got (no
 * tool is named with a slash, and `*` covers neither).
 */
export type FlowLabelSettings = Readonly<Record<string, readonly FlowLabel[]>>;

/** The `flowLabels` key of a server's resource reads, and of its prompts. */
export const RESOURCE_READS = 'resources/read';
export const PROMPT_GETS = 'prompts/get';
