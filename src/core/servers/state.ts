/** A server's lifecycle, one case at a time. */
export type ServerState = { kind: 'stopped' } | { kind: 'starting' } | { kind: 'running' } | { kind: 'error'; message: string; /** When an automatic restart is due (ms since epoch). */ restartAt?: number };

export function assertNever(value: never): never {
  throw new Error(`Unexpected value: ${JSON.stringify(value)}`);
}
