// The v2 SDK's Client (@modelcontextprotocol/client 2.x) under the same workloads. Its default
// version negotiation is the legacy handshake (initialize), which is what these workloads measure.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { main, type BenchClient, type Target } from './workloads';

function sdk2(target: Target): BenchClient {
  const transport =
    target.kind === 'stdio' ? new StdioClientTransport({ command: target.command, args: target.args, env: target.env, maxBufferSize: 64 * 1024 * 1024 }) : new StreamableHTTPClientTransport(new URL(target.url));
  const client = new Client({ name: 'bench', version: '1.0.0' }, { capabilities: {} });
  return {
    connect: () => client.connect(transport),
    echo: async (text) => {
      const result = await client.callTool({ name: 'echo', arguments: { text } });
      const first = (result.content as Array<{ type: string; text?: string }>)[0];
      return first?.type === 'text' ? (first.text ?? '') : '';
    },
    read: async (uri) => {
      const c = (await client.readResource({ uri })).contents[0] as { text?: string; blob?: string };
      return (c.text ?? c.blob ?? '').length;
    },
    close: () => client.close(),
  };
}

main(sdk2);
