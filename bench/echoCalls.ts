// What the benches that time `echo` through a path share (bench/gateway.ts, bench/serve.ts): N calls
// one after the other, and rounds of many in flight, with the SDK's client; and the median.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export function echoCalls(calls: number, inFlight: number, rounds: number) {
  return {
    async sequential(client: Client): Promise<number> {
      const started = performance.now();
      for (let i = 0; i < calls; i++) await client.callTool({ name: 'echo', arguments: { text: `n${i}` } });
      return performance.now() - started;
    },
    async concurrent(client: Client): Promise<number> {
      const started = performance.now();
      for (let r = 0; r < rounds; r++)
        await Promise.all(Array.from({ length: inFlight }, (_, i) => client.callTool({ name: 'echo', arguments: { text: `n${i}` } })));
      return performance.now() - started;
    },
  };
}
