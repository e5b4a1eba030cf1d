import type { UnhandledRequest } from '../jsonrpc/connection';
import type { UrlElicitation } from '../protocol/errors';
import type { Implementation } from '../protocol/types';
import type { ResultCacheOptions } from './cache';
import type { ProtocolChoice } from './era';
import type { InputHandlers } from './inputRequests';

/** What the host answers when the server asks. A capability is declared only if its handler is here. */
export interface ClientHandlers extends InputHandlers {
  /** `createMessage` can offer the request's tools to the model (2025-11-25 `sampling.tools`). */
  samplingTools?: boolean;
  /** The elicitation modes `elicit` handles; form only unless said. */
  elicitationModes?: Array<'form' | 'url'>;
  /** Protocol extensions the host implements, declared as `capabilities.extensions` (MCP Apps: see ../apps/toolUi.ts). */
  extensions?: Record<string, object>;
  /** A server request refused because nothing here answers it (sampling a `deny` server asked for anyway, say). */
  unhandledRequest?(request: UnhandledRequest): void;
  /**
   * A request failed with -32042 (URL elicitation required): the person finishes the pages, and
   * 'retry' sends the same request again. `wait` tells which pages the server has reported
   * complete (`notifications/elicitation/complete`). Without this handler the error is thrown.
   */
  urlElicitationRequired?(
    pages: UrlElicitation[],
    wait: ElicitationWait,
    request: { method: string; params?: Record<string, unknown> },
    signal: AbortSignal,
  ): Promise<'retry' | 'stop'>;
}

/** What the server has said about the pages of one -32042 answer. */
export interface ElicitationWait {
  isCompleted(elicitationId: string): boolean;
  /** Resolves once every page is reported complete; never rejects. */
  readonly allCompleted: Promise<void>;
}

export interface McpClientOptions {
  clientInfo?: Implementation;
  handlers?: ClientHandlers;
  /** Default timeout of every request (60 s). */
  requestTimeoutMs?: number;
  /** Timeout of the initialize handshake; the request timeout otherwise. */
  initializeTimeoutMs?: number;
  /** The version offered in initialize; the newest we speak otherwise. */
  protocolVersion?: string;
  /**
   * The protocol era: '2025-11-25' (the initialize handshake) unless said; 'auto' probes
   * `server/discover` first and falls back to initialize; '2026-07-28' insists on the stateless era.
   */
  protocol?: ProtocolChoice;
  /**
   * How long the `server/discover` probe may wait before the server counts as one that predates it
   * (stdio, where an old server may stay silent). Unset, the probe waits as long as initialize would,
   * and a timeout fails the start (HTTP, where every server answers).
   */
  probeTimeoutMs?: number;
  /** Rounds of `input_required` one call may go through before it fails (8). */
  maxInputRounds?: number;
  /**
   * 2026-07-28 caching hints: list and read results are kept for the `ttlMs` the server names
   * (see ./cache.ts); `false` asks the server every time. The initialize era never caches.
   */
  cache?: ResultCacheOptions | false;
}

export const DEFAULT_CLIENT_INFO: Implementation = { name: 'mcp-host', version: '0.1.0', title: 'MCP Host' };
