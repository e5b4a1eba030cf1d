import { ErrorCode, McpError } from '../protocol/errors';
import { ListChanges } from '../protocol/methods';
import type { Meta, RequestId, ServerCapabilities, SubscriptionFilter } from '../protocol/types';
import { MetaKeys } from '../protocol/versions';
import type { LogEntry } from '../transport/transport';

/** The first wait before a listen that ended or failed is opened again; it doubles up to the cap. */
export const LISTEN_RETRY_FIRST_MS = 500;
export const LISTEN_RETRY_MAX_MS = 30_000;
/** A listen that lasted this long was working: the next one starts the backoff afresh. */
const LISTEN_LIVED_MS = 60_000;

/** What a {@link ListenSubscription} needs of its client: the wire, the server's capabilities, the log. */
export interface ListenChannel {
  /**
   * Sends one `subscriptions/listen` without a timeout. `onId` learns its request id before it is
   * sent, and a new one each time it is sent anew after its stream broke. Aborting `signal` ends it
   * (`notifications/cancelled` on stdio, the POST closed over HTTP). Resolves when the server ends
   * it with a result; rejects when it fails, the server cancels it, or its stream breaks for good.
   */
  send(filter: SubscriptionFilter, onId: (id: RequestId) => void, signal: AbortSignal): Promise<unknown>;
  capabilities(): ServerCapabilities;
  /** Whether the connection still lives: a listen is opened again only while it does. */
  isOpen(): boolean;
  log(level: LogEntry['level'], message: string): void;
  /** The clock that tells how long a listen lived; Date.now otherwise. */
  now?(): number;
  /**
   * A listen stands again after a gap (the previous one ended, or its stream broke and it was
   * sent anew): what it covers may have changed meanwhile unseen, so the client reads it again.
   */
  resumed?(acknowledged: SubscriptionFilter): void;
}

/** One `subscriptions/listen` request, from sending until it ends. */
interface Listen {
  readonly filter: SubscriptionFilter;
  readonly key: string;
  readonly controller: AbortController;
  readonly openedAt: number;
  id?: RequestId;
  acknowledged?: SubscriptionFilter;
  /** Sent anew after its stream broke: notifications may have been lost meanwhile. */
  resent?: boolean;
}

/**
 * What to ask a server for on `subscriptions/listen`: exactly the change notifications its
 * capabilities offer, and the resources when it offers `resources.subscribe`. Undefined when that
 * is nothing, so no listen is opened.
 */
export function listenFilter(capabilities: ServerCapabilities, resources: Iterable<string>): SubscriptionFilter | undefined {
  const filter: SubscriptionFilter = {};
  for (const change of Object.values(ListChanges)) if (capabilities[change.offeredBy]?.listChanged) filter[change.listenKey] = true;
  const uris = capabilities.resources?.subscribe ? [...new Set(resources)].sort() : [];
  if (uris.length) filter.resourceSubscriptions = uris;
  return Object.keys(filter).length ? filter : undefined;
}

/** What was asked for and not acknowledged, in words for the log. */
export function refusedParts(asked: SubscriptionFilter, acknowledged: SubscriptionFilter | undefined): string[] {
  const refused: string[] = [];
  for (const { listenKey } of Object.values(ListChanges)) {
    if (asked[listenKey] && acknowledged?.[listenKey] !== true) refused.push(listenKey);
  }
  const granted = new Set(Array.isArray(acknowledged?.resourceSubscriptions) ? acknowledged.resourceSubscriptions : []);
  for (const uri of asked.resourceSubscriptions ?? []) if (!granted.has(uri)) refused.push(uri);
  return refused;
}

/** The listen a notification belongs to: `_meta["io.modelcontextprotocol/subscriptionId"]`. */
export function subscriptionIdOf(params: unknown): RequestId | undefined {
  const meta = params && typeof params === 'object' ? (params as { _meta?: Meta })._meta : undefined;
  const id = meta?.[MetaKeys.subscriptionId];
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/**
 * The one `subscriptions/listen` of a 2026-07-28 connection, which replaces the GET stream and
 * resources/(un)subscribe: opened when there is something to listen for, replaced (the new one
 * first, the old one ended once the new one is acknowledged, so nothing is missed) when the
 * subscribed resources change, and opened again with a capped backoff when the server ends it or
 * its stream breaks, as long as the connection lives. Only notifications stamped with the id of a
 * listen still open count.
 */
export class ListenSubscription {
  private resources: string[] = [];
  /** The newest listen: the one that carries what we want now. */
  private current: Listen | undefined;
  /** Every listen not yet ended, the current one included: two at most (the acknowledged one and its replacement). */
  private readonly open = new Set<Listen>();
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private updateTimer: ReturnType<typeof setTimeout> | undefined;
  private failures = 0;
  /** A listen ended and the next one is not acknowledged yet: what came meanwhile was missed. */
  private gap = false;
  /** The server does not know the method, or the client is disposed: nothing is opened again. */
  private stopped = false;

  constructor(private readonly channel: ListenChannel) {}

  /** The acknowledged current listen: its id and what the server agreed to send. */
  get state(): { id: RequestId; acknowledged: SubscriptionFilter } | undefined {
    const c = this.current;
    return c?.acknowledged && { id: c.id!, acknowledged: c.acknowledged };
  }

  /** The resources whose updates are wanted; a change replaces the listen (changes within one tick count as one). */
  setResources(uris: Iterable<string>): void {
    this.resources = [...uris];
    this.updateTimer ??= setTimeout(() => {
      this.updateTimer = undefined;
      this.update();
    }, 0);
  }

  /** Whether a notification comes from a listen of ours; others are dropped with a debug line. */
  accepts(params: unknown): boolean {
    return !!this.listenOf(params, 'a notification');
  }

  /** `notifications/subscriptions/acknowledged`: what the server will send on that listen. */
  acknowledge(params: { notifications?: SubscriptionFilter } | undefined): void {
    const listen = this.listenOf(params, 'an acknowledgement');
    if (!listen) return;
    const acknowledged = params?.notifications && typeof params.notifications === 'object' ? params.notifications : {};
    listen.acknowledged = acknowledged;
    if (listen === this.current && (this.gap || listen.resent)) {
      this.gap = false;
      listen.resent = false;
      this.channel.resumed?.(acknowledged);
    }
    const refused = refusedParts(listen.filter, acknowledged);
    this.channel.log(
      refused.length ? 'warning' : 'debug',
      `subscriptions/listen ${listen.id} acknowledged${refused.length ? `; the server refused ${refused.join(', ')}` : ''}`,
    );
    // The new listen covers what the older ones did: end them now, not before, so nothing falls in a gap.
    if (listen === this.current) for (const other of this.open) if (other !== listen) this.end(other);
  }

  /** Ends every listen and opens none again. */
  dispose(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.updateTimer);
    this.endAll();
  }

  /** Opens, replaces or ends the listen so that it asks for what is wanted now. */
  update(): void {
    if (this.stopped || this.retryTimer || !this.channel.isOpen()) return;
    const filter = listenFilter(this.channel.capabilities(), this.resources);
    // Nothing left to listen for.
    if (!filter) return this.endAll();
    const key = JSON.stringify(filter);
    if (this.current?.key === key) return;
    // A current listen not yet acknowledged never covered anything: it goes, so at most the last acknowledged one and the new one are open.
    if (this.current && !this.current.acknowledged) this.end(this.current);
    const listen: Listen = { filter, key, controller: new AbortController(), openedAt: this.now() };
    this.current = listen;
    this.open.add(listen);
    this.channel
      .send(
        filter,
        (id) => {
          // Called again when the client sends the listen anew after its stream broke: the new id counts from now on.
          if (listen.id !== undefined) listen.resent = true;
          listen.id = id;
          listen.acknowledged = undefined;
        },
        listen.controller.signal,
      )
      .then(
        () => this.ended(listen, 'the server ended it'),
        (error) => this.ended(listen, McpError.from(error)),
      );
  }

  private listenOf(params: unknown, what: string): Listen | undefined {
    const id = subscriptionIdOf(params);
    for (const listen of this.open) if (id !== undefined && listen.id === id) return listen;
    this.channel.log('debug', `dropped ${what} of subscription ${JSON.stringify(id)}, which is not ours`);
    return undefined;
  }

  private endAll(): void {
    for (const listen of this.open) this.end(listen);
    this.current = undefined;
  }

  private end(listen: Listen): void {
    this.open.delete(listen);
    listen.controller.abort();
  }

  private ended(listen: Listen, why: string | McpError): void {
    this.open.delete(listen);
    if (listen.controller.signal.aborted || this.stopped || listen !== this.current) return;
    this.current = undefined;
    if (!this.channel.isOpen()) return;
    const reason = typeof why === 'string' ? why : why.message;
    if (typeof why !== 'string' && why.code === ErrorCode.MethodNotFound) {
      this.stopped = true;
      return this.channel.log(
        'warning',
        `the server does not offer subscriptions/listen (${reason}): list changes and resource updates will not arrive`,
      );
    }
    if (listen.acknowledged) this.gap = true;
    if (listen.acknowledged && this.now() - listen.openedAt >= LISTEN_LIVED_MS) this.failures = 0;
    const delay = Math.min(LISTEN_RETRY_FIRST_MS * 2 ** this.failures++, LISTEN_RETRY_MAX_MS);
    this.channel.log('info', `subscriptions/listen ${listen.id} ended (${reason}); listening again in ${delay} ms`);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.update();
    }, delay);
  }

  private now(): number {
    return this.channel.now?.() ?? Date.now();
  }
}
