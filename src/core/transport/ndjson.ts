import type { Readable, Writable } from 'node:stream';
import { AbstractMessageReader, AbstractMessageWriter, Disposable } from 'vscode-jsonrpc/node';
import type { DataCallback, Message, MessageWriter } from 'vscode-jsonrpc/node';
import { McpError } from '../protocol/errors';

/** Large enough for a 10 MB tool result with JSON escaping; a transport may lower or raise it. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

const NEWLINE = 0x0a;

/**
 * Reads newline-delimited JSON (the MCP stdio framing) from a byte stream.
 *
 * Bytes are collected per line and decoded only once the line is complete, so chunks may split
 * anywhere, including inside a UTF-8 sequence. `\r\n` and blank lines are tolerated. A line that
 * is not JSON or that exceeds the size limit is reported through `onError` and skipped: the
 * connection lives on. Values are handed on unvalidated; {@link classifyMessage} judges them.
 */
export class NdjsonMessageReader extends AbstractMessageReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private discardingOversizedLine = false;
  private callback: DataCallback | undefined;

  constructor(
    private readonly readable: Readable,
    private readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES,
  ) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const onData = (chunk: Buffer | string) => this.onData(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    const onError = (error: Error) => this.fireError(error);
    const onEnd = () => this.fireClose();
    this.readable.on('data', onData);
    this.readable.on('error', onError);
    this.readable.on('end', onEnd);
    this.readable.on('close', onEnd);
    return Disposable.create(() => {
      this.callback = undefined;
      this.readable.off('data', onData);
      this.readable.off('error', onError);
      this.readable.off('end', onEnd);
      this.readable.off('close', onEnd);
    });
  }

  private onData(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE, start); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      if (this.pendingBytes === 0 && !this.discardingOversizedLine) {
        // The common case, a whole line inside one chunk: decoded in place, nothing copied.
        if (end - start > this.maxLineBytes) this.oversized();
        else this.handleLine(chunk.toString('utf8', start, end));
      } else {
        this.append(chunk.subarray(start, end));
        if (this.discardingOversizedLine) this.discardingOversizedLine = false;
        else
          this.handleLine((this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes)).toString('utf8'));
        this.pending = [];
        this.pendingBytes = 0;
      }
      start = end + 1;
    }
    if (start < chunk.length) this.append(chunk.subarray(start));
  }

  private append(piece: Buffer): void {
    if (this.discardingOversizedLine || piece.length === 0) return;
    if (this.pendingBytes + piece.length > this.maxLineBytes) {
      this.oversized();
      this.discardingOversizedLine = true;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    // Copy: a stream may reuse the chunk's memory once the handler returns.
    this.pending.push(Buffer.from(piece));
    this.pendingBytes += piece.length;
  }

  private oversized(): void {
    this.fireError(
      McpError.oversize(`Incoming message exceeds the limit of ${this.maxLineBytes} bytes; it was dropped`, this.maxLineBytes),
    );
  }

  private handleLine(line: string): void {
    let text = line;
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      const preview = text.length > 200 ? `${text.slice(0, 200)}…` : text;
      this.fireError(McpError.parseError(`Not JSON (${(e as Error).message}): ${preview}`, { line: preview }));
      return;
    }
    this.callback?.(value as Message);
  }
}

/**
 * Writes one JSON message per line. Each message goes to the stream at once, in call order;
 * messages written in the same tick leave in one system call (cork until the next tick), so 256
 * requests sent together cost one write, not 256. The promise resolves once the stream took it and rejects, never throws, when it could not.
 */
/** Write errors that mean the reading end is gone (the server exited or closed its input): the message fails as Connection Closed. */
const PEER_GONE_CODES = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END']);

export class NdjsonMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private errorCount = 0;
  private corked = false;

  constructor(private readonly writable: Writable) {
    super();
    writable.on('error', (error) => this.fireError(error));
    writable.on('close', () => this.fireClose());
  }

  write(message: Message): Promise<void> {
    const writable = this.writable;
    if (writable.destroyed || writable.writableEnded) return Promise.reject(McpError.connectionClosed('the output stream is closed'));
    let line: string;
    try {
      line = `${JSON.stringify(message)}\n`;
    } catch (error) {
      // A value JSON cannot write (a BigInt, a cycle): this message fails, the stream is fine.
      return Promise.reject(error);
    }
    if (!this.corked) {
      this.corked = true;
      writable.cork();
      process.nextTick(() => {
        this.corked = false;
        writable.uncork();
      });
    }
    return new Promise<void>((resolve, reject) => {
      writable.write(line, 'utf8', (error) => {
        if (error) {
          this.errorCount++;
          this.fireError(error, message, this.errorCount);
          // The same code as a write after the stream closed: a request that meets a server dying mid-write is not an internal error.
          reject(
            PEER_GONE_CODES.has((error as NodeJS.ErrnoException).code ?? '')
              ? McpError.connectionClosed(`the output stream is closed (${error.message})`)
              : error,
          );
        } else {
          this.errorCount = 0;
          resolve();
        }
      });
    });
  }

  end(): void {
    if (!this.writable.writableEnded) this.writable.end();
  }
}
