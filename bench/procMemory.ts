// The resident memory of processes in one process tree, from /proc (Linux only), for the chat bench
// (bench/chat-vscode-invoke.ts): what each relay VS Code starts for a shared server holds. The tree is
// walked down from one pid given by the caller (never processes found by name machine-wide), and a
// process is picked by its command line. Elsewhere than Linux it finds nothing.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** VmRSS of a /proc/<pid>/status text, in KiB; undefined when it has none (a zombie, a kernel thread). */
export function vmRssKb(status: string): number | undefined {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return m ? Number(m[1]) : undefined;
}

/**
 * The parent pid and process group of a /proc/<pid>/stat text. The command name (second field) is in
 * parentheses and may hold spaces and parentheses itself, so the fields are read after its last `)`.
 */
export function statFields(stat: string): { ppid: number; pgrp: number } | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ppid = Number(fields[1]);
  const pgrp = Number(fields[2]);
  return Number.isInteger(ppid) && Number.isInteger(pgrp) && fields.length > 3 ? { ppid, pgrp } : undefined;
}

const readOrUndefined = (file: string) => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    // The process ended while it was read, or /proc is not there.
    return undefined;
  }
};

function allStats(proc: string): Map<number, { ppid: number; pgrp: number }> {
  const stats = new Map<number, { ppid: number; pgrp: number }>();
  let entries: string[];
  try {
    entries = fs.readdirSync(proc).filter((e) => /^\d+$/.test(e));
  } catch {
    return stats;
  }
  for (const e of entries) {
    const text = readOrUndefined(path.join(proc, e, 'stat'));
    const fields = text === undefined ? undefined : statFields(text);
    if (fields) stats.set(Number(e), fields);
  }
  return stats;
}

/** `root` and every process below it, found by each process's parent pid. */
export function descendants(root: number, proc = '/proc'): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of allStats(proc)) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const found: number[] = [];
  for (const queue = [root]; queue.length;) {
    const pid = queue.shift()!;
    if (found.includes(pid)) continue;
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

/**
 * The top of `pid`'s process group among its ancestors: the harness starts the VS Code server in a group
 * of its own (test/harness/lib.js, `detached`), so from inside its extension host this is that server.
 */
export function groupTop(pid: number, proc = '/proc'): number {
  const stats = allStats(proc);
  let top = pid;
  for (let up = stats.get(pid); up && stats.get(up.ppid)?.pgrp === stats.get(pid)?.pgrp; up = stats.get(up.ppid)) top = up.ppid;
  return top;
}

export interface ProcessMemory {
  pid: number;
  argv: string[];
  rssKb: number;
}

/** The processes under `root` (itself included) whose argv `pick` accepts, with their resident memory. */
export function residentUnder(root: number, pick: (argv: string[]) => boolean, proc = '/proc'): ProcessMemory[] {
  const found: ProcessMemory[] = [];
  for (const pid of descendants(root, proc)) {
    const cmdline = readOrUndefined(path.join(proc, String(pid), 'cmdline'));
    if (!cmdline) continue;
    const argv = cmdline.split('\0');
    if (argv.at(-1) === '') argv.pop();
    if (!pick(argv)) continue;
    const status = readOrUndefined(path.join(proc, String(pid), 'status'));
    const rssKb = status === undefined ? undefined : vmRssKb(status);
    if (rssKb !== undefined) found.push({ pid, argv, rssKb });
  }
  return found;
}
