// The workloads, written once against a small adapter so ours and the SDK Client run exactly the
// same steps. Each runs in a child process of its own (see run.mjs), so peak RSS is per client.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface BenchClient {
  /** Spawns (stdio) or reaches (http) the server and completes the handshake. */
  connect(): Promise<void>;
  /** One tools/call of the echo tool; resolves with the text it echoed. */
  echo(text: string): Promise<string>;
  /** One resources/read; resolves with the length of the text or base64 blob. */
  read(uri: string): Promise<number>;
  close(): Promise<void>;
}

/** Which protocol era the client speaks: the initialize handshake, or 2026-07-28 (stateless). */
export type Era = 'legacy' | 'modern';
export type Target = ({ kind: 'stdio'; command: string; args: string[]; env: Record<string, string> } | { kind: 'http'; url: string }) & {
  era: Era;
};
export type ClientFactory = (target: Target) => BenchClient;

export const SEQUENTIAL_CALLS = 5000;
export const IN_FLIGHT = 256;
export const ROUNDS = 20;
const RESOURCE_CHARS = { 'bench://text': 10 * 1024 * 1024, 'bench://blob': Math.ceil((10 * 1024 * 1024) / 3) * 4 };

export const FIXTURE = path.join(__dirname, '..', 'bench', 'fixture-server.mjs');
/** The modern-era server, on the v2 SDK (the minimal fixture speaks only the initialize era). */
export const V2_FIXTURE = path.join(__dirname, '..', 'bench', 'v2-fixture-server.mjs');

async function sequential(client: BenchClient): Promise<void> {
  for (let i = 0; i < SEQUENTIAL_CALLS; i++) {
    const text = `call ${i}`;
    if ((await client.echo(text)) !== text) throw new Error(`call ${i} echoed the wrong text`);
  }
}

async function concurrent(client: BenchClient): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    const texts = Array.from({ length: IN_FLIGHT }, (_, i) => `r${round} c${i}`);
    const echoed = await Promise.all(texts.map((t) => client.echo(t)));
    echoed.forEach((e, i) => {
      if (e !== texts[i]) throw new Error(`round ${round} call ${i} echoed the wrong text`);
    });
  }
}

async function large(client: BenchClient): Promise<void> {
  for (const [uri, chars] of Object.entries(RESOURCE_CHARS)) {
    const got = await client.read(uri);
    if (got !== chars) throw new Error(`${uri}: ${got} characters instead of ${chars}`);
  }
}

/** Starts the HTTP fixture and resolves with its URL and a way to stop it. */
async function startHttpFixture(program: string): Promise<{ url: string; stop(): void }> {
  const child: ChildProcess = spawn(process.execPath, [program, 'http'], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.setEncoding('utf8');
  for await (const chunk of child.stdout!) {
    out += chunk;
    const m = /LISTENING (\d+)/.exec(out);
    if (m) return { url: `http://127.0.0.1:${m[1]}/mcp`, stop: () => child.kill() };
  }
  throw new Error('the HTTP fixture did not start');
}

/**
 * The same small environment for both clients' servers. The SDK passes only a few variables on by
 * default and we pass everything; a variable such as NODE_EXTRA_CA_CERTS alone costs the server's
 * Node tens of milliseconds at startup, which would be measured as the client's.
 */
const FIXTURE_ENV: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
const stdioTarget = (era: Era): Target => ({
  kind: 'stdio',
  command: process.execPath,
  args: [era === 'modern' ? V2_FIXTURE : FIXTURE, 'stdio'],
  env: FIXTURE_ENV,
  era,
});

/**
 * The workloads by name. The modern ones run the same bodies in the 2026-07-28 era against the v2
 * SDK server; only clients that speak that era run them (ours and the v2 SDK's).
 */
const BODIES: Record<string, { body: (client: BenchClient) => Promise<void>; http: boolean; era: Era }> = {
  sequential: { body: sequential, http: false, era: 'legacy' },
  concurrent: { body: concurrent, http: false, era: 'legacy' },
  large: { body: large, http: false, era: 'legacy' },
  'http-sequential': { body: sequential, http: true, era: 'legacy' },
  'http-concurrent': { body: concurrent, http: true, era: 'legacy' },
  'modern-sequential': { body: sequential, http: false, era: 'modern' },
  'modern-http-sequential': { body: sequential, http: true, era: 'modern' },
  'modern-http-concurrent': { body: concurrent, http: true, era: 'modern' },
};

/** Runs one workload once and resolves with the time it took. */
export interface Measured {
  ms: number;
  /** CPU time (user + system) this process spent on the workload. */
  cpuMs: number;
  /** CPU time the server process(es) spent meanwhile, where the system says (Linux /proc). */
  serverCpuMs?: number;
}

/** Clock ticks per second of /proc's CPU times: 100 on every Linux Node runs on. */
const CLOCK_TICKS = 100;

/** The CPU milliseconds (user + system) the child processes of this one have used so far, if /proc says. */
function childrenCpuMs(): number | undefined {
  try {
    let ticks = 0;
    for (const task of fs.readdirSync(`/proc/${process.pid}/task`)) {
      for (const pid of fs.readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) {
        // The fields after the command (which may hold spaces) start at state; utime and stime are the 12th and 13th of them.
        const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()!.split(' ');
        ticks += Number(fields[11]) + Number(fields[12]);
      }
    }
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

function since(started: number, cpu: NodeJS.CpuUsage, serverCpu?: number): Measured {
  const used = process.cpuUsage(cpu);
  const ms = performance.now() - started;
  const serverNow = serverCpu === undefined ? undefined : childrenCpuMs();
  return {
    ms,
    cpuMs: (used.user + used.system) / 1000,
    ...(serverNow !== undefined && serverCpu !== undefined ? { serverCpuMs: serverNow - serverCpu } : {}),
  };
}

export async function runWorkload(name: string, factory: ClientFactory): Promise<Measured> {
  if (name === 'initialize') {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const client = factory(stdioTarget('legacy'));
    await client.connect();
    const measured = since(started, cpu);
    await client.close();
    return measured;
  }
  const workload = BODIES[name];
  if (!workload) throw new Error(`unknown workload ${name}`);
  const { body, era } = workload;
  const http = workload.http ? await startHttpFixture(era === 'modern' ? V2_FIXTURE : FIXTURE) : undefined;
  try {
    const client = factory(http ? { kind: 'http', url: http.url, era } : stdioTarget(era));
    await client.connect();
    const serverCpu = childrenCpuMs();
    const started = performance.now();
    const cpu = process.cpuUsage();
    await body(client);
    const measured = since(started, cpu, serverCpu);
    await client.close();
    return measured;
  } finally {
    http?.stop();
  }
}

/** The entry point of a client child: runs the workload named in argv and prints one JSON line. */
export function main(factory: ClientFactory): void {
  const name = process.argv[2];
  report(name, runWorkload(name, factory));
}

/** Prints one JSON line with the figures and the peak RSS, and exits. */
export function report(name: string, measured: Promise<Measured>): void {
  measured.then(
    (m) => {
      process.stdout.write(`${JSON.stringify({ ...m, maxRssKb: process.resourceUsage().maxRSS })}\n`);
      process.exit(0);
    },
    (error) => {
      process.stderr.write(`${name}: ${error?.stack ?? error}\n`);
      process.exit(1);
    },
  );
}
