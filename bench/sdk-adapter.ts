// The official SDK clients (v1 `@modelcontextprotocol/sdk`, v2 `@modelcontextprotocol/client`)
// share the shape these workloads use, so one adapter serves both.
import type { BenchClient } from './workloads';

interface SdkClient<T> {
  connect(transport: T): Promise<void>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<object>;
  readResource(params: { uri: string }): Promise<{ contents: unknown[] }>;
  close(): Promise<void>;
}

export function sdkBenchClient<T>(client: SdkClient<T>, transport: T): BenchClient {
  return {
    connect: () => client.connect(transport),
    echo: async (text) => {
      const result = await client.callTool({ name: 'echo', arguments: { text } });
      const first = ((result as { content?: unknown }).content as Array<{ type: string; text?: string }>)[0];
      return first?.type === 'text' ? (first.text ?? '') : '';
    },
    read: async (uri) => {
      const c = (await client.readResource({ uri })).contents[0] as { text?: string; blob?: string };
      return (c.text ?? c.blob ?? '').length;
    },
    close: () => client.close(),
  };
}
