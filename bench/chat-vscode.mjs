// The chat gateway measured in the real VS Code (issue 22), for `npm run bench -- --only chat-vscode`:
// bench/chat-vscode-invoke.ts runs inside VS Code 1.139's extension host, through the real-VS-Code
// harness (test/harness/: its cached code-server, VS Code server and Chromium; install.sh is
// idempotent), with the release VSIX of MCP Host installed. It times `vscode.lm.invokeTool` of a shared
// server's `echo` (once per `mcpHost.chat.connection`: relay, http) against the same fixture offered to
// VS Code directly by a provider of the runner extension (declared in its manifest here), and writes
// p50/p90 of each side, and the memory each connection costs: the resident size of each relay process
// VS Code runs for the shared server (`relay`; none with `http`) and the extension host's beside it.
//
// MCP Host's gateway listens on a Unix socket in its global storage when that path fits in
// `sockaddr_un` (as in a usual profile), else on 127.0.0.1: the harness's deep scratch folders give
// TCP, a short one under the system's temporary folder gives the socket. Both are measured, each in
// a VS Code of its own.
//
//   node bench/chat-vscode.mjs [--calls N] [--runs N] [--relay-only]
//
// One VS Code's ratio moves by more than the 10 % the target allows from one run to the next;
// --runs N measures the socket's VS Code N times, each a fresh one, and
// prints the median of each ratio over them beside every run's own.
// --relay-only: the socket's VS Code and the relay connection alone. MCP_HOST_BENCH_PROFILE=1: a CPU
// profile of the extension host during extra shared calls, in .harness/bench-chat-vscode-profiles/.
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stats } from './stats.mjs';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const h = require(path.join(here, '..', 'test', 'harness', 'lib.js'));
const { runExtHost } = require(path.join(here, '..', 'test', 'harness', 'run-vscode-tests.js'));

/** Issue 22's target for the chat's own calls: the shared server's p50 at most 1.10 × the direct one's. */
export const CHAT_VSCODE_MAX = 1.1;
const PROVIDER_ID = 'mcpHostBench.direct';

/** The harness's runner manifest with the direct server's provider declared, as VS Code requires before it registers. */
function benchManifest() {
  const manifest = JSON.parse(fs.readFileSync(path.join(here, '..', 'test', 'harness', 'runner-ext', 'package.json'), 'utf8'));
  manifest.contributes = {
    ...manifest.contributes,
    mcpServerDefinitionProviders: [{ id: PROVIDER_ID, label: 'MCP Host bench: the fixture, direct' }],
  };
  return manifest;
}

/** One VS Code, one measurement: the bench body's JSON, with the load around it. */
async function measureOnce(paths, vsix, { base, transport, calls, connections, profiles }) {
  const extensionsDir = path.join(base, 'extensions');
  h.installVsix(paths, vsix, { extensionsDir, userDataDir: path.join(base, 'install-user-data'), base });
  const out = path.join(base, 'chat-vscode.json');
  const loadBefore = os.loadavg()[0];
  const r = await runExtHost(paths, {
    base,
    extensionsDir,
    // Short: the socket path of the gateway lies under it (see above).
    name: 'cv',
    files: [path.join(here, 'chat-vscode-invoke.ts')],
    manifest: benchManifest(),
    env: {
      MCP_HOST_BENCH_OUT: out,
      MCP_HOST_BENCH_PROVIDER: PROVIDER_ID,
      MCP_HOST_BENCH_CALLS: String(calls),
      ...(connections ? { MCP_HOST_BENCH_CONNECTIONS: connections } : {}),
      // Beside the scratch folders (the socket's is removed after its run): profile-<transport>-<connection>.cpuprofile.
      ...(profiles ? { MCP_HOST_BENCH_PROFILE: path.join(profiles, `profile-${transport}`) } : {}),
    },
  });
  if (r.failed || !fs.existsSync(out)) throw new Error(`the in-VS-Code bench (${transport}) failed: ${(r.failures ?? []).join('; ')}`);
  const result = JSON.parse(fs.readFileSync(out, 'utf8'));
  const notes = [];
  if (result.gatewayTransport !== transport)
    notes.push(
      `asked for the gateway on ${transport}, it listened on ${result.gatewayTransport} (scratch folder ${base.length} characters long)`,
    );
  return { ...result, loadAverage: [loadBefore, os.loadavg()[0]], notes };
}

/** `relayOnly`: the socket's VS Code and the relay connection alone (a quicker look, not the whole figure); `runs`: that many socket VS Codes. */
export async function measureChatInVsCode({ calls = 200, relayOnly = false, runs: socketRuns = 1 } = {}) {
  const paths = h.install();
  const vsix = h.buildVsix();
  const runs = [];
  const profiles = process.env.MCP_HOST_BENCH_PROFILE ? h.scratch('bench-chat-vscode-profiles') : undefined;
  const options = { calls, connections: relayOnly ? 'relay' : undefined, profiles };
  for (let i = 0; i < socketRuns; i++) {
    const short = fs.mkdtempSync(path.join(os.tmpdir(), 'mhb-'));
    try {
      runs.push(await measureOnce(paths, vsix, { base: short, transport: 'socket', ...options }));
    } finally {
      fs.rmSync(short, { recursive: true, force: true });
    }
  }
  if (!relayOnly) runs.push(await measureOnce(paths, vsix, { base: h.scratch('bench-chat-vscode'), transport: 'tcp', ...options }));
  h.killAllGroups();
  return { max: CHAT_VSCODE_MAX, runs, medians: mediansOf(runs), measured: new Date().toISOString() };
}

const RATIOS = ['ratioP50', 'hopFloorRatioP50', 'relayFloorRatioP50', 'sharedVsHopFloorP50'];

/** Per gateway transport and connection measured more than once: the median of each ratio over its runs. */
function mediansOf(runs) {
  const groups = new Map();
  for (const run of runs)
    for (const phase of run.phases) {
      const key = `${run.gatewayTransport}/${phase.connection}`;
      groups.set(key, [...(groups.get(key) ?? []), phase]);
    }
  return [...groups]
    .filter(([, phases]) => phases.length > 1)
    .map(([key, phases]) => ({
      key,
      runs: phases.length,
      ...Object.fromEntries(RATIOS.map((r) => [r, stats(phases.map((p) => p[r])).median])),
      ...(phases.every((p) => p.memory) ? { relayRssKb: stats(phases.map((p) => p.memory.relayRssKb)).median } : {}),
    }));
}

const mb = (kb) => `${(kb / 1024).toFixed(1)} MB`;

/** A phase's memory: the relays' resident size (a process each per shared server; none over HTTP) and the extension host's. */
function memoryLine(m) {
  const relays =
    m.relayProcesses === 0
      ? 'no relay process'
      : `${m.relayProcesses} relay process${m.relayProcesses === 1 ? '' : 'es'}, RSS ${mb(m.relayRssKb)}${m.relayProcesses > 1 ? ` (${m.relayRssKbEach.map(mb).join(', ')})` : ''}`;
  return `memory: ${relays}; extension host RSS ${mb(m.extHostRssKb)} (${mb(m.extHostAtStartKb)} before VS Code started any server; the phases share it, so not sharing's own cost)`;
}

export function printChatInVsCode(result) {
  const [first] = result.runs;
  console.log(
    `\nChat gateway in VS Code ${first.vscode} (issue 22, measured ${result.measured}): ${first.calls} sequential vscode.lm.invokeTool calls of echo on each side, in ${first.blocks} interleaved blocks, after ${first.warmup} each to warm up`,
  );
  const ms = (s) => `p50 ${s.p50.toFixed(2)} ms, p90 ${s.p90.toFixed(2)} ms (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;
  for (const run of result.runs) {
    console.log(`  gateway on ${run.gatewayTransport} (load average ${run.loadAverage.map((l) => l.toFixed(2)).join(' → ')})`);
    for (const phase of run.phases) {
      const how = phase.connection === 'relay' ? "VS Code's stdio client → MCP Host's relay" : "VS Code's HTTP client";
      console.log(`    mcpHost.chat.connection: ${phase.connection} (${how} → the gateway)`);
      console.log(`      direct (VS Code runs the stdio server)  ${ms(phase.directMs)}`);
      console.log(`      shared (through MCP Host's gateway)     ${ms(phase.sharedMs)}`);
      console.log(`      floor (VS Code's HTTP client, no server) ${ms(phase.floorMs)}`);
      console.log(`      relay floor (the relay, no gateway)     ${ms(phase.relayFloorMs)}`);
      if (phase.hopFloorMs) console.log(`      hop floor (relay → piped → the server)  ${ms(phase.hopFloorMs)}`);
      const met = phase.ratioP50 <= result.max;
      console.log(
        `      shared/direct p50 ${phase.ratioP50.toFixed(2)} ≤ ${result.max.toFixed(2)}  ${met ? 'met' : 'NOT MET'}   (p90 ${phase.ratioP90.toFixed(2)}); floor/direct p50 ${phase.floorRatioP50.toFixed(2)}; relay floor/direct p50 ${phase.relayFloorRatioP50.toFixed(2)}`,
      );
      if (phase.hopFloorMs)
        console.log(
          `      hop floor/direct p50 ${phase.hopFloorRatioP50.toFixed(2)} (no gateway behind a relay goes under it); shared/hop floor p50 ${phase.sharedVsHopFloorP50.toFixed(2)} (the gateway's own cost)`,
        );
      if (phase.memory) console.log(`      ${memoryLine(phase.memory)}`);
    }
    for (const note of run.notes) console.log(`    note: ${note}`);
  }
  for (const m of result.medians ?? [])
    console.log(
      `  median of ${m.runs} VS Codes, gateway on ${m.key.replace('/', ', connection ')}: shared/direct ${m.ratioP50.toFixed(2)} ≤ ${result.max.toFixed(2)}  ${m.ratioP50 <= result.max ? 'met' : 'NOT MET'}; hop floor/direct ${m.hopFloorRatioP50.toFixed(2)}; relay floor/direct ${m.relayFloorRatioP50.toFixed(2)}; shared/hop floor ${m.sharedVsHopFloorP50.toFixed(2)}${m.relayRssKb === undefined ? '' : m.relayRssKb === 0 ? '; no relay process' : `; relay RSS ${mb(m.relayRssKb)}`}`,
    );
}

// `node bench/chat-vscode.mjs` measures this alone.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name) => {
    const i = process.argv.indexOf(name);
    return i === -1 ? undefined : Number(process.argv[i + 1]);
  };
  const calls = arg('--calls');
  const runs = arg('--runs');
  measureChatInVsCode({
    ...(calls === undefined ? {} : { calls }),
    ...(runs === undefined ? {} : { runs }),
    relayOnly: process.argv.includes('--relay-only'),
  }).then(
    (r) => {
      printChatInVsCode(r);
      process.exit(0);
    },
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
