/** A server's lifecycle, one case at a time. */
export type ServerState = { kind: 'stopped' } | { kind: 'starting' } | { kind: 'running' } | { kind: 'error'; message: string; /** When an automatic restart is due (ms since epoch). */ restartAt?: number };

export { assertNever } from '../protocol/assertNever';
