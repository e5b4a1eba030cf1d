import { execFile, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import { Emitter } from 'vscode-jsonrpc/node';
import { NdjsonMessageReader, NdjsonMessageWriter, DEFAULT_MAX_LINE_BYTES } from './ndjson';
import { McpError } from '../protocol/errors';
import { spawnServer, treeKill } from './processes';
import type { LogEntry, Transport, TransportClosed } from './transport';

export interface StdioServerParams {
  command: string;
  args?: string[];
  cwd?: string;
  /** Merged over the parent environment; a value of `null` removes the variable. */
  env?: Record<string, string | null>;
  /** How long each shutdown step waits: stdin closed → SIGTERM → SIGKILL. */
  shutdownGraceMs?: number;
  maxMessageBytes?: number;
  /** The environment to merge over; defaults to this process's. */
  baseEnv?: NodeJS.ProcessEnv;
  /**
   * What the process reads on its descriptors 3, 4, …: each a pipe that carries these bytes, then
   * ends, written anew at every start (bubblewrap reads its seccomp filter from one).
   */
  inputFds?: readonly Uint8Array[];
  /**
   * Descriptors of this process the child gets as they are, after the `inputFds` pipes (bubblewrap
   * binds the folders and files they name: launcher.ts). Open until whoever made them closes them.
   */
  passFds?: readonly number[];
}

const STDERR_TAIL_LINES = 20;
/** The longest stderr line kept, in UTF-16 code units; the rest of a longer line is counted, not kept. */
export const MAX_STDERR_LINE = 64 * 1024;
const DEFAULT_GRACE_MS = 2000;

/** Spawns a server process and speaks newline-delimited JSON over its stdin/stdout. */
/**
 * The environment a stdio server starts with: its base (the process's own by default), `PWD` set
 * to the folder it runs in, then its entry's variables (`null` removes one). A server, or a shell
 * it starts, that reads `$PWD` reads where it really is, not where its caller was, so the roots
 * fence (which expands `$PWD` against this environment) and the kernel agree.
 */
export function serverEnvironment(params: Pick<StdioServerParams, 'baseEnv' | 'env' | 'cwd'>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...(params.baseEnv ?? process.env) };
  // Windows has no PWD of its own: only a POSIX shell's (Git Bash, MSYS) is corrected there.
  if (process.platform !== 'win32' || env.PWD !== undefined) env.PWD = path.resolve(params.cwd ?? process.cwd());
  for (const [k, v] of Object.entries(params.env ?? {})) {
    if (v === null) delete env[k];
    else env[k] = v;
  }
  return env;
}

export class StdioTransport implements Transport {
  private readonly logEmitter = new Emitter<LogEntry>();
  private readonly closeEmitter = new Emitter<TransportClosed>();
  readonly onLog = this.logEmitter.event;
  readonly onDidClose = this.closeEmitter.event;
  readonly network = { transport: 'pipe' as const };

  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly stderrTail: string[] = [];
  /** The stderr line still waiting for its newline, at most MAX_STDERR_LINE long… */
  private stderrPartial = '';
  /** …and how many bytes of it were dropped beyond that. */
  private stderrDropped = 0;
  private stopping = false;
  private startedIn: string | undefined;
  private startedWith: Readonly<NodeJS.ProcessEnv> | undefined;
  private closedState: TransportClosed | undefined;
  private exited: Promise<void> = Promise.resolve();
  private _reader: NdjsonMessageReader | undefined;
  private _writer: NdjsonMessageWriter | undefined;

  constructor(private readonly params: StdioServerParams) {}

  get reader(): NdjsonMessageReader {
    if (!this._reader) throw new Error('StdioTransport: start() first');
    return this._reader;
  }
  get writer(): NdjsonMessageWriter {
    if (!this._writer) throw new Error('StdioTransport: start() first');
    return this._writer;
  }
  get pid(): number | undefined {
    return this.child?.pid;
  }
  /** The folder the server was started in (absolute), where it resolves relative paths; undefined before it starts. */
  get workingFolder(): string | undefined {
    return this.startedIn;
  }
  /** The environment the server was started with (the variables it may expand in a path); undefined before it starts. */
  get environment(): Readonly<NodeJS.ProcessEnv> | undefined {
    return this.startedWith;
  }
  /** Listeners on the child's pipes, summed over every event: a figure that must not grow with traffic. */
  get streamListenerCount(): number {
    const child = this.child;
    if (!child) return 0;
    return [child.stdin, child.stdout, child.stderr].reduce(
      (sum, stream) => sum + stream.eventNames().reduce((n, e) => n + stream.listenerCount(e), 0),
      0,
    );
  }
  /** The unfinished stderr line: what is kept of it, and how many bytes were dropped. */
  get pendingStderr(): { kept: number; droppedBytes: number } {
    return { kept: this.stderrPartial.length, droppedBytes: this.stderrDropped };
  }
  /** The last lines the server wrote to stderr, for error messages. */
  get recentStderr(): string[] {
    return [...this.stderrTail];
  }

  start(): Promise<void> {
    const { command, args = [], cwd } = this.params;
    const env = serverEnvironment(this.params);
    // spawn resolves a relative cwd against ours, as of now.
    this.startedIn = path.resolve(cwd ?? process.cwd());
    const inputFds = this.params.inputFds ?? [];
    this.startedWith = env;
    const child = spawnServer(
      command,
      args,
      {
        cwd,
        env,
        // Its own process group, so stop() can reach every descendant at once.
        detached: process.platform !== 'win32',
        windowsHide: true,
      },
      inputFds.length,
      this.params.passFds,
    );
    this.child = child;
    inputFds.forEach((bytes, i) => {
      const pipe = child.stdio[3 + i] as NodeJS.WritableStream & { on(event: 'error', listener: () => void): void };
      // A process that exits before reading it closes the pipe: nothing to report.
      pipe.on('error', () => undefined);
      pipe.end(bytes);
    });
    this._reader = new NdjsonMessageReader(child.stdout, this.params.maxMessageBytes ?? DEFAULT_MAX_LINE_BYTES);
    this._writer = new NdjsonMessageWriter(child.stdin);
    // A server that dies while we write must not crash us with EPIPE.
    child.stdin.on('error', (e) => this.log('debug', 'transport', `stdin: ${e.message}`));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => this.onStderr(text));
    this.exited = new Promise<void>((resolve) => {
      child.once('close', () => resolve());
      // A spawn failure emits 'error' and may never emit 'close'.
      child.once('error', () => resolve());
    });

    return new Promise<void>((resolve, reject) => {
      child.once('spawn', () => {
        this.log('info', 'transport', `started ${describeCommand(command, args)} (pid ${child.pid})`);
        resolve();
      });
      child.once('error', (error: NodeJS.ErrnoException) => {
        const message =
          error.code === 'ENOENT'
            ? `Command not found: ${command}${cwd ? ` (cwd ${cwd})` : ''}. Check that it is installed and on the PATH the server is started with: ${env.PATH ?? env.Path ?? '(no PATH)'}`
            : error.code === 'EACCES'
              ? `Command is not executable: ${command}`
              : `Could not start ${command}: ${error.message}`;
        this.log('error', 'transport', message);
        this.fireClosed(message, 'failed');
        reject(McpError.connectionClosed(message));
      });
      child.once('exit', (code, signal) => {
        this.flushStderr();
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        const tail = this.stderrTail.length ? `\n${this.stderrTail.join('\n')}` : '';
        this.log(this.stopping ? 'info' : 'error', 'transport', `server ${how}`);
        // Sweep anything the server left behind in its process group. (Not on Windows: there the
        // tree is found by a pid that, once its process has exited, may already be another's.)
        if (process.platform !== 'win32') this.signalGroup('SIGTERM');
        this.fireClosed(`server ${how}${this.stopping ? '' : tail}`);
      });
    });
  }

  async close(): Promise<void> {
    await this.shutDown();
    // The process is gone and has said its last: this transport's events end here.
    this.logEmitter.dispose();
    this.closeEmitter.dispose();
  }

  private async shutDown(): Promise<void> {
    const child = this.child;
    if (!child || this.stopping) return this.exited;
    this.stopping = true;
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return this.exited;
    const grace = this.params.shutdownGraceMs ?? DEFAULT_GRACE_MS;
    this._writer?.end();
    if (await this.waitForExit(grace)) return;
    this.log('warning', 'transport', `server did not exit within ${grace} ms of stdin closing; sending SIGTERM`);
    this.signalGroup('SIGTERM');
    if (await this.waitForExit(grace)) return;
    this.log('warning', 'transport', `server ignored SIGTERM for ${grace} ms; sending SIGKILL`);
    this.signalGroup('SIGKILL');
    await this.exited;
  }

  private waitForExit(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void this.exited.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    const kill = treeKill(pid, signal);
    if (kill.kind === 'command') {
      // Fails harmlessly when the tree is already gone.
      execFile(kill.command, kill.args, { windowsHide: true }, () => undefined);
      return;
    }
    try {
      process.kill(kill.pid, kill.signal);
    } catch {
      // ESRCH: the group is already gone.
    }
  }

  // Each chunk is scanned once and only its own newlines are looked for, so a flood without a
  // newline costs time in proportion to its size and memory no more than one capped line.
  private onStderr(text: string): void {
    let start = 0;
    for (let newline = text.indexOf('\n', start); newline !== -1; newline = text.indexOf('\n', start)) {
      this.keepStderr(text.slice(start, newline));
      this.flushStderr();
      start = newline + 1;
    }
    if (start < text.length) this.keepStderr(start === 0 ? text : text.slice(start));
  }

  private keepStderr(piece: string): void {
    const room = MAX_STDERR_LINE - this.stderrPartial.length;
    if (piece.length <= room && this.stderrDropped === 0) {
      this.stderrPartial += piece;
      return;
    }
    let cut = this.stderrDropped > 0 ? 0 : Math.max(0, room);
    // Never split a surrogate pair at the cut.
    if (cut > 0 && cut < piece.length && /[\uD800-\uDBFF]/.test(piece[cut - 1])) cut--;
    if (cut > 0) this.stderrPartial += piece.slice(0, cut);
    this.stderrDropped += Buffer.byteLength(cut > 0 ? piece.slice(cut) : piece, 'utf8');
  }

  private flushStderr(): void {
    let line = this.stderrPartial.endsWith('\r') ? this.stderrPartial.slice(0, -1) : this.stderrPartial;
    if (this.stderrDropped > 0) line += ` (… ${this.stderrDropped} bytes dropped)`;
    this.stderrPartial = '';
    this.stderrDropped = 0;
    if (line) this.pushStderr(line);
  }

  private pushStderr(line: string): void {
    if (line.trim() === '') return;
    this.stderrTail.push(line);
    if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
    this.log('info', 'stderr', line);
  }

  private fireClosed(reason: string, kind: TransportClosed['kind'] = this.stopping ? 'stopped' : 'lost'): void {
    if (this.closedState) return;
    const closed = { kind, reason };
    this.closedState = closed;
    this.closeEmitter.fire(closed);
  }

  private log(level: LogEntry['level'], source: LogEntry['source'], message: string): void {
    this.logEmitter.fire({ level, source, message });
  }
}

function describeCommand(command: string, args: string[]): string {
  return [command, ...args].map((a) => (/[\s'"]/.test(a) ? JSON.stringify(a) : a)).join(' ');
}
