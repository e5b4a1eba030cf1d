// The v2 SDK's Client (@modelcontextprotocol/client 2.x) under the same workloads. Its default
// version negotiation is the legacy handshake (initialize), which is what the legacy workloads
// measure; the modern ones pin 2026-07-28 (no probe), as ours does.
import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { sdkBenchClient } from './sdk-adapter';
import { main, type BenchClient, type Target } from './workloads';

function sdk2(target: Target): BenchClient {
  const transport: Transport =
    target.kind === 'stdio'
      ? new StdioClientTransport({ command: target.command, args: target.args, env: target.env, maxBufferSize: 64 * 1024 * 1024 })
      : new StreamableHTTPClientTransport(new URL(target.url));
  const versionNegotiation = target.era === 'modern' ? { mode: { pin: '2026-07-28' } } : undefined;
  return sdkBenchClient(
    new Client({ name: 'bench', version: '1.0.0' }, { capabilities: {}, ...(versionNegotiation ? { versionNegotiation } : {}) }),
    transport,
  );
}

main(sdk2);
