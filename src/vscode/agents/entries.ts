import type { AgentTarget } from '../../core/agents/targets';

// The connected entries as the Connect flow (./connectAgent.ts, in dist/agents.js) and the
// connections (./agents.ts) both name them, in a leaf file: neither imports the other.

/** One connected configuration entry, as stored. */
export interface AgentEntry {
  /** The servers given to it, by name. */
  servers: string[];
  /** The file it was written to. */
  file: string;
  /** What MCP Host made in that file, so Disconnect leaves it as it was. */
  made?: { createdFile?: boolean; addedContainer?: boolean };
}

/** What the Connect flow needs of the connections. */
export interface AgentEntries {
  entries(): Array<{ target: AgentTarget; entry: AgentEntry }>;
  entryOf(target: AgentTarget): AgentEntry | undefined;
  setEntry(target: AgentTarget, entry: AgentEntry | undefined): Promise<void>;
  /** Writes the launcher every entry names; its path. */
  launcher(): Promise<string>;
}
