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

/** The first line the relay writes: who it relays for, and the window's token. */
export interface RelayHello {
  mcpHostRelay: 1;
  token: string;
  server: string;
}

function main(): void {
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
