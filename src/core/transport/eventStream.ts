import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { McpError } from '../protocol/errors';

export interface EventStreamHandlers {
  onEvent(event: EventSourceMessage): void;
  /** The server's `retry:` field: how long to wait before reconnecting. */
  onRetry?(ms: number): void;
}

/**
 * Reads a `text/event-stream` body to its end, handing each complete event over as it arrives.
 * Resolves when the server ends the stream; rejects when it breaks (the network, an abort) or an
 * event grows past `maxChars`. An event cut off by either is never handed over: a resumed stream
 * sends it again whole.
 */
export async function readEventStream(body: ReadableStream<Uint8Array>, maxChars: number, handlers: EventStreamHandlers): Promise<void> {
  let oversize = false;
  const parser = createParser({
    onEvent: handlers.onEvent,
    onRetry: handlers.onRetry,
    // Unknown fields and bad retry values are the server's problem and harmless; only size matters.
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') oversize = true;
    },
    maxBufferSize: maxChars,
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      if (oversize) {
        await reader.cancel().catch(() => undefined);
        throw McpError.oversize(`An event on the SSE stream exceeds the limit of ${maxChars} characters; the stream was dropped`, maxChars);
      }
    }
    parser.feed(decoder.decode());
  } finally {
    reader.releaseLock();
  }
}

export function isOversizeError(error: unknown): boolean {
  return error instanceof McpError && error.kind?.type === 'oversize';
}
