// The official SDK's Client under the same workloads.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { main, type BenchClient, type Target } from './workloads';

function sdk(target: Target): BenchClient {
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

main(sdk);
