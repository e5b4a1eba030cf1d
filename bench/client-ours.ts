// Our McpClient under the benchmark workloads.
import { McpClient } from '../src/core/client/client';
import { StdioTransport } from '../src/core/transport/stdio';
import { StreamableHttpTransport } from '../src/core/transport/streamableHttp';
import type { CallToolResult, ReadResourceResult } from '../src/core/protocol/types';
import { main, type BenchClient, type Target } from './workloads';

function ours(target: Target): BenchClient {
  const transport =
    target.kind === 'stdio'
      ? new StdioTransport({ command: target.command, args: target.args, baseEnv: target.env })
      : new StreamableHttpTransport({ url: target.url });
  // The modern workloads pin 2026-07-28, as the v2 client does: the era is what is measured, not the probe.
  const client = new McpClient(transport, {
    clientInfo: { name: 'bench', version: '1.0.0' },
    ...(target.era === 'modern' ? { protocol: '2026-07-28' as const } : {}),
  });
  return {
    connect: async () => void (await client.connect()),
    echo: async (text) => textOf((await client.callTool('echo', { text })).result),
    read: async (uri) => sizeOf(await client.readResource(uri)),
    close: () => client.close(),
  };
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

function sizeOf(result: ReadResourceResult): number {
  const c = result.contents[0] as { text?: string; blob?: string };
  return (c.text ?? c.blob ?? '').length;
}

main(ours);
