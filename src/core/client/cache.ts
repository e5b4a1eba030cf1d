import type { RequestOptions } from '../jsonrpc/connection';
import { traitsOf } from '../protocol/methods';
import { stableStringify } from '../protocol/stableStringify';

/** Whether the server may let us cache the answer of `method` (its `cacheable` in protocol/methods.ts). */
export function isCacheableMethod(method: string): boolean {
  return !!traitsOf(method)?.cacheable;
}

/** Options of a request whose answer the server may let us cache. */
export interface CachingRequestOptions extends RequestOptions {
  /**
   * Ask the server even when a cached answer is still fresh (the person's "Refresh"); the new
   * answer replaces the cached one.
   */
  fresh?: boolean;
}

export interface ResultCacheOptions {
  /** Entries kept at most, least recently used dropped first (256). */
  maxEntries?: number;
  /** Characters of resource contents kept at most over all entries (8 M); a larger single read is not kept. */
  maxContentChars?: number;
  /** Invalidated groups (list methods, resource URIs) whose generation is remembered (1,000), least recently invalidated forgotten first. */
  maxGenerations?: number;
  /** The clock (ms); injected so tests can pass a TTL without waiting. */
  now?: () => number;
}

/** How long the server lets us keep a result: its `ttlMs`, where missing, negative or not a number mean 0 (not at all). */
export function cacheLifetimeMs(result: unknown): number {
  const ttl = result && typeof result === 'object' ? (result as { ttlMs?: unknown }).ttlMs : undefined;
  return typeof ttl === 'number' && Number.isFinite(ttl) && ttl > 0 ? ttl : 0;
}

interface Entry {
  result: unknown;
  expiresAt: number;
  group: string;
  chars: number;
}

/** Taken before a request is sent; {@link ResultCache.store} refuses an answer that an invalidation overtook. */
export interface CacheTicket {
  readonly key: string;
  readonly group: string;
  readonly generation: number;
  readonly epoch: number;
}

const DEFAULT_MAX_ENTRIES = 256;
const DEFAULT_MAX_CONTENT_CHARS = 8_000_000;
const DEFAULT_MAX_GENERATIONS = 1_000;

/**
 * The answers of one stateless connection, by method and params (so page by page, since the
 * cursor is a param), each kept for the `ttlMs` its result names. Expiry is looked at when an
 * entry is asked for: nothing polls on the TTL. `list_changed` and `resources/updated` drop the
 * entries they concern; the client clears it all when the connection ends.
 */
export class ResultCache {
  private readonly entries = new Map<string, Entry>();
  /**
   * Set on each invalidation of a group (a list method, or the reads of one URI) from one counter,
   * least recently invalidated first. A server can name any number of URIs in `resources/updated`,
   * so only the last {@link maxGenerations} are remembered; a forgotten group reads as
   * {@link forgottenGeneration}, the highest generation forgotten, so a ticket taken before its
   * last invalidation can never match again.
   */
  private readonly generations = new Map<string, number>();
  private lastGeneration = 0;
  private forgottenGeneration = 0;
  /** Bumped by {@link clear}: no answer asked for before it is kept after it. */
  private epoch = 0;
  private contentChars = 0;
  private readonly maxEntries: number;
  private readonly maxContentChars: number;
  private readonly maxGenerations: number;
  private readonly now: () => number;

  constructor(options: ResultCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.maxContentChars = options.maxContentChars ?? DEFAULT_MAX_CONTENT_CHARS;
    this.maxGenerations = options.maxGenerations ?? DEFAULT_MAX_GENERATIONS;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /** How many invalidated groups are remembered. */
  get rememberedGenerations(): number {
    return this.generations.size;
  }

  /** The cached answer, if one is still fresh. */
  get(method: string, params: unknown): unknown {
    const key = keyOf(method, params);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.now() >= entry.expiresAt) {
      this.drop(key, entry);
      return undefined;
    }
    // Most recently used last, so eviction takes the oldest use first.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.result;
  }

  ticket(method: string, params: unknown): CacheTicket {
    const group = groupOf(method, params);
    return { key: keyOf(method, params), group, generation: this.generationOf(group), epoch: this.epoch };
  }

  /** Keeps an answer for its `ttlMs`, unless that is 0 or its group was invalidated since the ticket. */
  store(ticket: CacheTicket, result: unknown): void {
    const ttl = cacheLifetimeMs(result);
    const stale = this.generationOf(ticket.group) !== ticket.generation || ticket.epoch !== this.epoch;
    const old = this.entries.get(ticket.key);
    if (old) this.drop(ticket.key, old);
    if (ttl === 0 || stale) return;
    const chars = contentCharsOf(result);
    if (chars > this.maxContentChars) return;
    this.entries.set(ticket.key, { result, expiresAt: this.now() + ttl, group: ticket.group, chars });
    this.contentChars += chars;
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.contentChars <= this.maxContentChars) break;
      this.drop(key, entry);
    }
  }

  /** Drops every page of one list method (its `list_changed` arrived). */
  invalidateList(method: string): void {
    this.invalidateGroup(method);
  }

  /** Drops the cached read of one resource (`notifications/resources/updated`). */
  invalidateRead(uri: string): void {
    this.invalidateGroup(readGroup(uri));
  }

  clear(): void {
    this.epoch++;
    this.entries.clear();
    this.contentChars = 0;
  }

  private invalidateGroup(group: string): void {
    this.bump(group);
    for (const [key, entry] of this.entries) if (entry.group === group) this.drop(key, entry);
  }

  private generationOf(group: string): number {
    return this.generations.get(group) ?? this.forgottenGeneration;
  }

  private bump(group: string): void {
    this.generations.delete(group);
    this.generations.set(group, ++this.lastGeneration);
    for (const [oldest, generation] of this.generations) {
      if (this.generations.size <= this.maxGenerations) break;
      this.generations.delete(oldest);
      this.forgottenGeneration = Math.max(this.forgottenGeneration, generation);
    }
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.contentChars -= entry.chars;
  }
}

/** Method and params without `_meta` (which carries our version, capabilities and log level, not the question). */
function keyOf(method: string, params: unknown): string {
  const { _meta: _ignored, ...question } = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>;
  return `${method} ${stableStringify(question)}`;
}

function groupOf(method: string, params: unknown): string {
  if (method !== 'resources/read') return method;
  const uri = (params as { uri?: unknown } | undefined)?.uri;
  return readGroup(typeof uri === 'string' ? uri : '');
}

function readGroup(uri: string): string {
  return `resources/read ${uri}`;
}

/** The text and base64 characters of a read result: what makes a cached resource large. */
function contentCharsOf(result: unknown): number {
  const contents = (result as { contents?: unknown } | undefined)?.contents;
  if (!Array.isArray(contents)) return 0;
  let chars = 0;
  for (const c of contents as Array<{ text?: unknown; blob?: unknown }>) {
    if (typeof c?.text === 'string') chars += c.text.length;
    if (typeof c?.blob === 'string') chars += c.blob.length;
  }
  return chars;
}
