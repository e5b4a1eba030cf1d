import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * How many processes (threads count: the kernel counts tasks) a sandboxed server and everything
 * it starts may have at once: enough for a server that runs a build or a few dozen Node processes,
 * not for a fork bomb.
 */
export const MAX_SANDBOX_TASKS = 1024;
/** The memory a sandboxed server may use: half of this machine's. */
export const sandboxMemoryBytes = (): number => Math.floor(os.totalmem() / 2);

/**
 * Where a limit of a sandboxed server comes from on Linux:
 * - `cgroup-v2` / `cgroup-v1`: a control group of its own (pids.max, memory.max or
 *   memory.limit_in_bytes) for the whole sandbox, made where MCP Host may make one (as root: the
 *   unified hierarchy's top, or the pids and memory hierarchies of a v1 machine under MCP Host's own
 *   group), removed when the server has stopped;
 * - `rlimit`: RLIMIT_NPROC, set inside the sandbox's user namespace (where it counts the sandbox's
 *   processes only), and RLIMIT_DATA, per process (RLIMIT_AS would stop V8, which reserves far more
 *   address space than it uses); the kernel applies no RLIMIT_NPROC to host root;
 * - `none`: nothing could be set (said in the sandbox's description).
 */
export interface SandboxLimits {
  /** What limits the number of processes. */
  processes: 'cgroup-v2' | 'cgroup-v1' | 'rlimit' | 'none';
  /** What limits the memory: the whole sandbox's (a cgroup) or each process's. */
  memory: 'cgroup-v2' | 'cgroup-v1' | 'rlimit' | 'none';
  /** The `cgroup.procs` files the process that becomes bubblewrap writes itself into first. */
  cgroupProcs: string[];
  /** The arguments of prlimit (util-linux, found on the host's PATH) that start the server inside the sandbox, or none. */
  prlimit: string[];
  /** Removes the control groups once their processes are gone (waiting a little for the last to end). */
  release(): Promise<void>;
}

/** The file system a limit is made through; tests give a simulated one. */
export interface CgroupFs {
  readFile(p: string): string | undefined;
  mkdir(p: string): boolean;
  writeFile(p: string, text: string): boolean;
  rmdir(p: string): boolean;
}

export const thisCgroupFs: CgroupFs = {
  readFile: (p) => {
    try {
      return fs.readFileSync(p, 'utf8');
    } catch {
      return undefined;
    }
  },
  mkdir: (p) => {
    try {
      fs.mkdirSync(p);
      return true;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'EEXIST';
    }
  },
  writeFile: (p, text) => {
    try {
      fs.writeFileSync(p, text);
      return true;
    } catch {
      return false;
    }
  },
  rmdir: (p) => {
    try {
      fs.rmdirSync(p);
      return true;
    } catch {
      return false;
    }
  },
};

let made = 0;

/** The cgroup v2 mount (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on a hybrid machine) and the v1 mounts by controller, from mountinfo. */
function cgroupMounts(cg: CgroupFs): { v2?: string; v1: Map<string, string> } {
  const v1 = new Map<string, string>();
  let v2: string | undefined;
  for (const line of (cg.readFile('/proc/self/mountinfo') ?? '').split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const mountPoint = left.split(' ')[4];
    const [fstype, , superOptions = ''] = right.split(' ');
    if (fstype === 'cgroup2') v2 ??= mountPoint;
    else if (fstype === 'cgroup')
      for (const option of superOptions.split(',')) if (option === 'pids' || option === 'memory') v1.set(option, mountPoint);
  }
  return { v2, v1 };
}

/** A group under the unified hierarchy's top (root only: moving a process there needs the top's cgroup.procs). */
function v2Group(cg: CgroupFs, mount: string, tasks: number, memory: number): string | undefined {
  const available = (cg.readFile(path.join(mount, 'cgroup.controllers')) ?? '').split(/\s+/);
  if (!available.includes('pids') || !available.includes('memory')) return undefined;
  const enable = (dir: string) => {
    const on = (cg.readFile(path.join(dir, 'cgroup.subtree_control')) ?? '').split(/\s+/);
    return (on.includes('pids') && on.includes('memory')) || cg.writeFile(path.join(dir, 'cgroup.subtree_control'), '+pids +memory');
  };
  const parent = path.join(mount, 'mcp-host-sandbox');
  if (!enable(mount) || !cg.mkdir(parent) || !enable(parent)) return undefined;
  const group = path.join(parent, `${process.pid}-${++made}`);
  if (!cg.mkdir(group)) return undefined;
  if (cg.writeFile(path.join(group, 'pids.max'), String(tasks)) && cg.writeFile(path.join(group, 'memory.max'), String(memory)))
    return group;
  cg.rmdir(group);
  return undefined;
}

/** A group of a v1 controller under MCP Host's own group of it. */
function v1Group(cg: CgroupFs, mount: string, controller: 'pids' | 'memory', limit: [string, string]): string | undefined {
  const own = (cg.readFile('/proc/self/cgroup') ?? '')
    .split('\n')
    .map((l) => l.split(':'))
    .find(([, controllers]) => controllers?.split(',').includes(controller))?.[2];
  if (own === undefined) return undefined;
  const group = path.join(mount, own, `mcp-host-sandbox-${process.pid}-${++made}`);
  if (!cg.mkdir(group)) return undefined;
  if (cg.writeFile(path.join(group, limit[0]), limit[1])) return group;
  cg.rmdir(group);
  return undefined;
}

/**
 * The limits a sandboxed server starts with on Linux (see SandboxLimits). `prlimit` is the host's
 * prlimit, if any: it runs inside the sandbox (in /usr, which the sandbox shows).
 */
export function sandboxLimits(uid: number, prlimit: string | undefined, cg: CgroupFs = thisCgroupFs): SandboxLimits {
  const tasks = MAX_SANDBOX_TASKS;
  const memory = sandboxMemoryBytes();
  const groups: string[] = [];
  let processes: SandboxLimits['processes'] = 'none';
  let memoryBy: SandboxLimits['memory'] = 'none';
  if (uid === 0) {
    const mounts = cgroupMounts(cg);
    const v2 = mounts.v2 && v2Group(cg, mounts.v2, tasks, memory);
    if (v2) {
      groups.push(v2);
      processes = memoryBy = 'cgroup-v2';
    } else {
      const pids = mounts.v1.get('pids');
      const pidsGroup = pids && v1Group(cg, pids, 'pids', ['pids.max', String(tasks)]);
      if (pidsGroup) {
        groups.push(pidsGroup);
        processes = 'cgroup-v1';
      }
      const mem = mounts.v1.get('memory');
      const memGroup = mem && v1Group(cg, mem, 'memory', ['memory.limit_in_bytes', String(memory)]);
      if (memGroup) {
        groups.push(memGroup);
        memoryBy = 'cgroup-v1';
      }
    }
  }
  const limits: string[] = [];
  if (prlimit) {
    // Not for root: the kernel would not apply it.
    if (processes === 'none' && uid !== 0) {
      limits.push(`--nproc=${tasks}:${tasks}`);
      processes = 'rlimit';
    }
    limits.push(`--data=${memory}:${memory}`);
    if (memoryBy === 'none') memoryBy = 'rlimit';
  }
  return {
    processes,
    memory: memoryBy,
    cgroupProcs: groups.map((g) => path.join(g, 'cgroup.procs')),
    prlimit: prlimit && limits.length ? [prlimit, ...limits, '--'] : [],
    release: async () => {
      for (const group of groups) await releaseGroup(cg, group);
    },
  };
}

/** A group whose last process may still be ending (the kernel reaps a killed sandbox's processes after bubblewrap exits): removed now, or within a few seconds. */
async function releaseGroup(cg: CgroupFs, group: string): Promise<void> {
  for (let tries = 0; tries < 50 && !cg.rmdir(group); tries++) await new Promise((resolve) => setTimeout(resolve, 100));
}

/**
 * The command that starts bubblewrap inside the control groups: a shell that writes its own pid
 * into each `cgroup.procs`, refuses to go on if one cannot be written, and becomes bubblewrap.
 */
export function inControlGroups(
  cgroupProcs: readonly string[],
  command: string,
  args: readonly string[],
): { command: string; args: string[] } {
  if (!cgroupProcs.length) return { command, args: [...args] };
  const script = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';
  return { command: '/bin/sh', args: ['-c', script, 'mcp-host-limits', String(cgroupProcs.length), ...cgroupProcs, command, ...args] };
}

/** The limits as the description says them: "at most 1024 processes and 12 GiB of memory" and what could not be set. */
export function describeLimits(limits: Pick<SandboxLimits, 'processes' | 'memory'>): string {
  const gib = (sandboxMemoryBytes() / 2 ** 30).toFixed(1).replace(/\.0$/, '');
  const parts: string[] = [];
  if (limits.processes !== 'none') parts.push(`at most ${MAX_SANDBOX_TASKS} processes`);
  if (limits.memory !== 'none') parts.push(`${gib} GiB of memory${limits.memory === 'rlimit' ? ' per process' : ''}`);
  const missing = [limits.processes === 'none' && 'processes', limits.memory === 'none' && 'memory'].filter(Boolean);
  return [parts.join(' and '), missing.length ? `no limit on ${missing.join(' or ')} here` : ''].filter(Boolean).join('; ');
}
