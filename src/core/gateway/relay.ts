/**
 * The relay VS Code starts for a server shared with its chat (dist/relay.js): VS Code's own MCP
 * client talks to it over stdio, as to any local server, and it pipes every byte both ways to
 * MCP Host's gateway in the extension host (./relaySession.ts), over the gateway's Unix socket /
 * named pipe, else 127.0.0.1. It reads nothing and decides nothing: the gateway checks the token
 * and applies the person's policy. Why a relay and not VS Code's HTTP client: VS Code's HTTP
 * client costs about 5 ms a call more than its stdio client before any server answers (bench/).
 *
 * Arguments: the shared server's id. Environment (set by `resolveMcpServerDefinition` only, never
 * in the definitions VS Code caches): MCP_HOST_GATEWAY (a socket path, pipe name, or
 * `127.0.0.1:<port>`) and MCP_HOST_GATEWAY_TOKEN.
 */
import * as net from 'node:net';
import { homedir } from 'node:os';
import { gatewayCandidates, type GatewayRecord } from '../agents/rendezvous';
import { targetById } from '../agents/targets';

/** The first line the relay writes: who it relays for, and the window's token. */
export interface RelayHello {
  mcpHostRelay: 1;
  token: string;
  server: string;
}

/** An agent's relay's first line: the configuration entry it runs for (../agents/targets.ts), and the agents' token. */
interface AgentHello {
  mcpHostRelay: 1;
  token: string;
  agent: string;
}

/** Connects, or rejects when nobody answers within a second (a window that crashed left its record). */
function connectTo(address: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const tcp = /^127\.0\.0\.1:(\d{1,5})$/.exec(address);
    const socket = tcp ? net.connect({ host: '127.0.0.1', port: Number(tcp[1]), noDelay: true }) : net.connect({ path: address });
    const timer = setTimeout(() => socket.destroy(new Error('no answer')), 1000);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/**
 * No window to relay to: the agent's first request is answered with an error that says so (an
 * agent shows that message as the server's failure), and the relay exits. Nothing runs unguarded.
 */
function refuseAll(message: string): void {
  process.stderr.write(`${message}\n`);
  let buffered = '';
  process.stdin.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      let id: unknown;
      try {
        id = (JSON.parse(line) as { id?: unknown }).id;
      } catch {
        continue;
      }
      if (typeof id !== 'string' && typeof id !== 'number') continue;
      process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message } })}\n`, () => process.exit(1));
      return;
    }
  });
  process.stdin.on('end', () => process.exit(1));
}

/** `relay.js agent <entry>`, as the launcher runs it for an agent: finds this workspace's window and pipes to its gateway. */
async function agentMain(entry: string | undefined): Promise<void> {
  const target = entry === undefined ? undefined : targetById(entry);
  if (!target) {
    process.stderr.write(`MCP Host relay: ${JSON.stringify(entry)} is not an entry MCP Host writes (Connect an Agent writes them).\n`);
    process.exit(2);
  }
  const cwd = process.cwd();
  const candidates: GatewayRecord[] = await gatewayCandidates(homedir(), cwd, target.scope === 'user');
  for (const record of candidates) {
    let socket: net.Socket;
    try {
      socket = await connectTo(record.address);
    } catch {
      continue;
    }
    const hello: AgentHello = { mcpHostRelay: 1, token: record.token, agent: target.id };
    socket.write(`${JSON.stringify(hello)}\n`);
    process.stdin.pipe(socket);
    socket.pipe(process.stdout);
    socket.on('error', (error) => {
      process.stderr.write(`MCP Host relay: the window's gateway went (${error.message})\n`);
      process.exitCode = 1;
    });
    socket.on('close', () => process.stdout.write('', () => process.exit()));
    return;
  }
  refuseAll(
    `MCP Host: no VS Code window with MCP Host is open for ${cwd}` +
      (target.scope === 'user' ? ' (nor any other)' : '') +
      '. Open the workspace in VS Code: this agent reaches its MCP servers only through MCP Host, never without it.',
  );
}

function main(): void {
  if (process.argv[2] === 'agent') {
    void agentMain(process.argv[3]);
    return;
  }
  const server = process.argv[2];
  const at = process.env.MCP_HOST_GATEWAY;
  const token = process.env.MCP_HOST_GATEWAY_TOKEN;
  if (!server || !at || !token) {
    process.stderr.write(
      'MCP Host relay: started without its gateway; only VS Code starts it, for a server MCP Host shares with the chat.\n',
    );
    process.exit(2);
  }
  const tcp = /^127\.0\.0\.1:(\d{1,5})$/.exec(at);
  const socket = tcp ? net.connect({ host: '127.0.0.1', port: Number(tcp[1]), noDelay: true }) : net.connect({ path: at });
  const hello: RelayHello = { mcpHostRelay: 1, token, server };
  socket.write(`${JSON.stringify(hello)}\n`);
  process.stdin.pipe(socket);
  socket.pipe(process.stdout);
  socket.on('error', (error) => {
    process.stderr.write(
      `MCP Host relay: MCP Host's gateway cannot be reached (${error.message}); is the window that shares "${server}" still open?\n`,
    );
    process.exitCode = 1;
  });
  // The gateway ended the session (sharing stopped, the settings changed) or went: so does the server VS Code sees.
  socket.on('close', () => process.stdout.write('', () => process.exit()));
}

if (require.main === module) main();
