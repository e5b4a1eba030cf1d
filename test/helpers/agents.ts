// What the tests of `mcp-host serve` and of Connect an Agent share: the real third-party clients
// (test/harness/install-agents.sh installs Claude Code and the MCP Inspector from npm), a scripted
// client that speaks the stdio framing by hand (so it can send `server/discover` first, as Copilot
// CLI does), and the processes a server left behind, found by parent, never by name.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { writeGatewayRecord } from '../../src/core/agents/rendezvous';
import { ChatGateway } from '../../src/core/gateway/sdkGateway';
import { installedNode22, ROOT } from './servers';

/** The folder of the installed clients' binaries, and the Node 22 the Inspector needs. */
export function installedAgents(): { bin: string; node22: string } {
  const bin = execFileSync('bash', [path.join(ROOT, 'test', 'harness', 'install-agents.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 10 * 60_000,
  }).trim();
  return { bin, node22: installedNode22() };
}

/** Runs a command to its end; resolves with its exit code and output (never rejects on a non-zero exit). */
export function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env, timeout: options.timeoutMs ?? 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * Runs an agent to its end in its own process group, and ends that group (the agent and every server it started)
 * by its id once the agent exits or `timeoutMs` passes. Resolves on the agent's exit, not on its pipes' close: a
 * server it left behind may hold them open.
 */
export function runInGroup(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const group = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // The group is gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      group('SIGTERM');
      setTimeout(() => group('SIGKILL'), 2000).unref();
    }, options.timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      group('SIGKILL');
      child.stdout!.destroy();
      child.stderr!.destroy();
      resolve({ code, stdout, stderr, timedOut });
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}${error.message}`, timedOut });
    });
  });
}

/** The MCP Inspector's CLI, as a person runs it: `--cli --config FILE --server NAME --method …`. */
export function inspectorCli(
  agents: { bin: string; node22: string },
  config: string,
  server: string,
  args: string[],
  env?: NodeJS.ProcessEnv,
) {
  return run(agents.node22, [path.join(agents.bin, 'mcp-inspector'), '--cli', '--config', config, '--server', server, ...args], {
    env: { ...(env ?? process.env), MCP_INSPECTOR_SECRET_STORE: 'memory' },
  });
}

/** A client over stdio that writes JSON-RPC lines itself and reads the answers. */
export class ScriptedClient {
  readonly child: ChildProcess;
  private buffer = '';
  private nextId = 0;
  private readonly waiting = new Map<number, (message: Record<string, unknown>) => void>();
  /** Every notification and request the server sent, in order. */
  readonly received: Array<Record<string, unknown>> = [];
  stderr = '';

  constructor(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
    this.child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.child.stdout!.on('data', (d: Buffer) => {
      this.buffer += d.toString();
      for (let end = this.buffer.indexOf('\n'); end !== -1; end = this.buffer.indexOf('\n')) {
        const line = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 1);
        if (!line.trim()) continue;
        const message = JSON.parse(line) as Record<string, unknown>;
        const id = message.id as number | undefined;
        if (id !== undefined && message.method === undefined && this.waiting.has(id)) {
          this.waiting.get(id)!(message);
          this.waiting.delete(id);
        } else this.received.push(message);
      }
    });
  }

  request(method: string, params: Record<string, unknown> = {}, timeoutMs = 60_000): Promise<Record<string, unknown>> {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method}: no answer in ${timeoutMs} ms; stderr:\n${this.stderr}`)), timeoutMs);
      this.waiting.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  notify(method: string, params: Record<string, unknown> = {}): void {
    this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
  }

  /** server/discover as Copilot CLI sends it, then initialize at the version given, then initialized. */
  async handshake(version = '2025-06-18', clientInfo = { name: 'scripted-agent', version: '1.2.3' }): Promise<Record<string, unknown>> {
    const init = await this.request('initialize', { protocolVersion: version, capabilities: {}, clientInfo });
    this.notify('notifications/initialized');
    return init;
  }

  /** Closes stdin, as a client that goes does, and waits for the process to exit. */
  async close(timeoutMs = 20_000): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', (code) => resolve(code)));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  }
}

/** The pids whose parent is `pid` (Linux /proc), and theirs, down the tree. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(name)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const out: number[] = [];
  const walk = (p: number): void => {
    for (const child of parents.get(p) ?? []) {
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}

/** Whether a process is still there (and not a zombie). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The records of a JSON Lines file (a server's log of what it received, an audit file); none when it does not exist. */
export const jsonLines = <T>(file: string): T[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as T)
    : [];

/**
 * The record a window writes while an agent is connected (../../src/core/agents/rendezvous.ts): the
 * project's folder, `gateway`'s relay address and the agents' `token`; returns its file.
 */
export function writeWindowRecord(
  home: string,
  project: string,
  gateway: ChatGateway,
  token: string,
  written = Date.now(),
): Promise<string> {
  return writeGatewayRecord(home, `file://${project}`, {
    version: 1,
    folders: [project],
    address: ChatGateway.relayTarget(gateway.relayAddress),
    token,
    pid: process.pid,
    written,
  });
}
