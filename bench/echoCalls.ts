// What the benches that time `echo` through a path share (bench/gateway.ts, bench/serve.ts): N calls
// one after the other, and rounds of many in flight, with the SDK's client; every answer checked (a
// refusal or an error is not a call that went through, and a bench timing refusals times nothing);
// the paths timed interleaved and rotated; and the median.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A client of a path, and the name `echo` has there (`serve --config` names it `<server>__echo`). */
export type EchoPath = Client | { client: Client; tool: string };

export function echoCalls(calls: number, inFlight: number, rounds: number) {
  const call = async (path: EchoPath, text: string): Promise<void> => {
    const { client, tool } = 'client' in path ? path : { client: path, tool: 'echo' };
    const result = await client.callTool({ name: tool, arguments: { text } });
    const got = (result.content as Array<{ text?: string }> | undefined)?.[0]?.text;
    if (result.isError || got !== text) throw new Error(`${tool} did not echo ${JSON.stringify(text)}: ${JSON.stringify(result)}`);
  };
  const sequential = async (path: EchoPath): Promise<number> => {
    const started = performance.now();
    for (let i = 0; i < calls; i++) await call(path, `n${i}`);
    return performance.now() - started;
  };
  const concurrent = async (path: EchoPath): Promise<number> => {
    const started = performance.now();
    for (let r = 0; r < rounds; r++) await Promise.all(Array.from({ length: inFlight }, (_, i) => call(path, `n${i}`)));
    return performance.now() - started;
  };
  return {
    sequential,
    concurrent,
    /**
     * Every path once to warm up (JIT, connections), then `reps` repetitions of each, sequential and in
     * flight, rotated so no path always runs first; the medians in ms by path.
     */
    async medians<K extends string>(
      paths: Record<K, EchoPath>,
      reps: number,
    ): Promise<Record<K, { sequential: number; concurrent: number }>> {
      const order = Object.keys(paths) as K[];
      for (const name of order) await sequential(paths[name]);
      const times = Object.fromEntries(order.map((name) => [name, { sequential: [] as number[], concurrent: [] as number[] }])) as Record<
        K,
        { sequential: number[]; concurrent: number[] }
      >;
      for (let rep = 0; rep < reps; rep++) {
        const turn = [...order.slice(rep % order.length), ...order.slice(0, rep % order.length)];
        for (const name of turn) times[name].sequential.push(await sequential(paths[name]));
        for (const name of turn) times[name].concurrent.push(await concurrent(paths[name]));
      }
      return Object.fromEntries(
        order.map((name) => [name, { sequential: median(times[name].sequential), concurrent: median(times[name].concurrent) }]),
      ) as Record<K, { sequential: number; concurrent: number }>;
    },
  };
}
