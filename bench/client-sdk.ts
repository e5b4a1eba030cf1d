// The official SDK's Client under the same workloads.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { sdkBenchClient } from './sdk-adapter';
import { main, type BenchClient, type Target } from './workloads';

function sdk(target: Target): BenchClient {
  const transport: Transport =
    target.kind === 'stdio'
      ? new StdioClientTransport({ command: target.command, args: target.args, env: target.env, maxBufferSize: 64 * 1024 * 1024 })
      : new StreamableHTTPClientTransport(new URL(target.url));
  return sdkBenchClient(new Client({ name: 'bench', version: '1.0.0' }, { capabilities: {} }), transport);
}

main(sdk);
