import type { CreateMessageParams } from '../protocol/types';

/** Exchanges the sampling history keeps at most; the oldest go first. */
export const SAMPLING_HISTORY_MAX_ENTRIES = 200;
/** Bytes (UTF-8 JSON) of requests and answers it keeps at most over all exchanges. */
export const SAMPLING_HISTORY_MAX_BYTES = 8 * 1024 * 1024;
/** A request larger than this is kept without its messages, system prompt and tools: only its size is said. */
export const SAMPLING_HISTORY_MAX_REQUEST_BYTES = 2 * 1024 * 1024;

/** What the history needs of an exchange: what was sent and what came back. */
export interface SampledExchange {
  request: CreateMessageParams;
  response?: string;
  /** Set when the request was too large to keep: its size in bytes. */
  omittedRequestBytes?: number;
}

/**
 * The session's sampling exchanges, newest first, within a count and a byte budget (a server
 * can send many large requests, even ones that are refused). Entries are changed in place as the
 * exchange goes on; {@link changed} counts one again.
 */
export class SamplingHistory<E extends SampledExchange> {
  private readonly entries: E[] = [];
  private readonly sizes = new Map<E, number>();
  private bytes = 0;

  constructor(
    private readonly limits: { maxEntries: number; maxBytes: number; maxRequestBytes: number } = {
      maxEntries: SAMPLING_HISTORY_MAX_ENTRIES,
      maxBytes: SAMPLING_HISTORY_MAX_BYTES,
      maxRequestBytes: SAMPLING_HISTORY_MAX_REQUEST_BYTES,
    },
  ) {}

  /** Newest first. */
  get items(): readonly E[] {
    return this.entries;
  }

  /** Bytes the kept exchanges take, as counted against the budget. */
  get keptBytes(): number {
    return this.bytes;
  }

  add(entry: E): void {
    this.entries.unshift(entry);
    this.measure(entry);
  }

  /** The entry's request or answer changed (a reviewed request, the model's answer). */
  changed(entry: E): void {
    if (this.sizes.has(entry)) this.measure(entry);
  }

  remove(entry: E): void {
    const at = this.entries.indexOf(entry);
    if (at === -1) return;
    this.entries.splice(at, 1);
    this.bytes -= this.sizes.get(entry) ?? 0;
    this.sizes.delete(entry);
  }

  private measure(entry: E): void {
    let requestBytes = jsonBytes(entry.request);
    if (requestBytes > this.limits.maxRequestBytes) {
      entry.omittedRequestBytes = requestBytes;
      entry.request = { messages: [], maxTokens: entry.request.maxTokens };
      requestBytes = jsonBytes(entry.request);
    }
    const size = requestBytes + Buffer.byteLength(entry.response ?? '', 'utf8');
    this.bytes += size - (this.sizes.get(entry) ?? 0);
    this.sizes.set(entry, size);
    while (this.entries.length > this.limits.maxEntries || (this.bytes > this.limits.maxBytes && this.entries.length > 1)) {
      const oldest = this.entries.pop()!;
      this.bytes -= this.sizes.get(oldest) ?? 0;
      this.sizes.delete(oldest);
    }
  }
}

function jsonBytes(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
  } catch {
    return 0;
  }
}
