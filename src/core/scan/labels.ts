/** The flow guard's labels of a tool (./flowGuard.ts), apart so a server definition can name them without importing the guard. */
export type FlowLabel = 'untrusted' | 'private' | 'sink';

export const FLOW_LABELS: readonly FlowLabel[] = ['untrusted', 'private', 'sink'];

/** A server entry's `flowLabels`: per tool name (or `*` for the others), exactly the labels it has. */
export type FlowLabelSettings = Readonly<Record<string, readonly FlowLabel[]>>;
