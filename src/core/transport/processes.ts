import type { ChildProcessWithoutNullStreams, SpawnOptionsWithoutStdio } from 'node:child_process';
import { spawn as crossSpawn } from 'cross-spawn';

/**
 * Starts a server's command. On Windows, `npx`, `uvx` and every other `.cmd`/`.bat` shim only run
 * through cmd.exe, which reads its command line as shell text: cross-spawn finds the command on
 * the `PATH` with `PATHEXT` and escapes each argument for cmd.exe, so an argument stays one
 * argument and never becomes a command. Elsewhere it is node's own spawn, untouched.
 */
export function spawnServer(
  command: string,
  args: readonly string[],
  options: SpawnOptionsWithoutStdio,
  /** Pipes beyond stdin, stdout and stderr: the child's descriptors 3, 4, … (`child.stdio[3]`…). */
  extraPipes = 0,
  /** Descriptors of this process the child gets after those pipes, as they are (bubblewrap binds what they name). */
  passFds: readonly number[] = [],
): ChildProcessWithoutNullStreams {
  const stdio = [...Array<'pipe'>(3 + extraPipes).fill('pipe'), ...passFds];
  return crossSpawn(command, args, { ...options, stdio }) as ChildProcessWithoutNullStreams;
}

/** How to end a server and every process it started. */
export type TreeKill = { kind: 'group'; pid: number; signal: NodeJS.Signals } | { kind: 'command'; command: string; args: string[] };

/**
 * On POSIX the server runs in its own process group, and a signal to the group reaches every
 * descendant. Windows has no groups and no SIGTERM a console program can catch: `taskkill /T /F`
 * ends the process and its whole tree (`npx` → `node` → the server), where `child.kill()` would
 * end only the `cmd.exe` at the top.
 */
export function treeKill(pid: number, signal: NodeJS.Signals, platform: NodeJS.Platform = process.platform): TreeKill {
  if (platform === 'win32') return { kind: 'command', command: 'taskkill', args: ['/T', '/F', '/PID', String(pid)] };
  return { kind: 'group', pid: -pid, signal };
}
