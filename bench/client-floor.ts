// The floor: the same round trips as raw newline-delimited JSON through a pipe to a process that
// echoes each line back. No MCP and no JSON-RPC layer, just stringify, write, read, split, parse.
import { spawn } from 'node:child_process';
import { FIXTURE, SEQUENTIAL_CALLS, report, type Measured } from './workloads';

async function floor(): Promise<Measured> {
  const child = spawn(process.execPath, [FIXTURE, 'echo'], { stdio: ['pipe', 'pipe', 'inherit'] });
  let partial = '';
  let waiting: ((line: string) => void) | undefined;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) waiting?.(line);
  });
  const roundTrip = (message: object) =>
    new Promise<unknown>((resolve) => {
      waiting = (line) => resolve(JSON.parse(line));
      child.stdin.write(`${JSON.stringify(message)}\n`);
    });
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < SEQUENTIAL_CALLS; i++) {
    const text = `call ${i}`;
    const back = (await roundTrip({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text } } })) as {
      params: { arguments: { text: string } };
    };
    if (back.params.arguments.text !== text) throw new Error(`round trip ${i} came back wrong`);
  }
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  child.stdin.end();
  return { ms, cpuMs: (used.user + used.system) / 1000 };
}

report('floor', floor());
