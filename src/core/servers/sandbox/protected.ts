import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { acquireLock } from '../../files/auditLock';
import { openPolicyFile, readPolicyFileSync } from '../../files/policyFile';
import { makeChecked, NotFollowedError, removeIfAsMade, type MadeEntry, type StepHook } from './nofollow';

/**
 * Files that run later, outside any sandbox: a sandboxed server may write every folder it was
 * given except these, in each writable folder (the roots and `filesystem.allowWrite`), read-only
 * inside the sandbox whether they exist yet or not. The argument fence asks before a call of a tool
 * that is not read-only names one (src/core/policy/protectedPaths.ts).
 *
 * - git: the whole `.git` entry, read-only, whether a folder or a file (a worktree's or submodule's
 *   pointer to its git folder): git reads far more than its hooks and config from there (`commondir`
 *   and `objects/info/alternates` name other folders whose config and hooks it then runs, a worktree's
 *   `gitdir`), so no part of it is left writable; where `.git` does not exist, an empty folder, so
 *   that no repository can be made there; the same in every repository and worktree found inside
 *   the folder at launch (nested repositories, submodules), the git folder a `.git` file names and
 *   the folder `core.hooksPath` names, if inside;
 * - `.gitmodules` (submodule URLs and update commands);
 * - the editor's and the agents' configuration: `.vscode/` (settings, tasks that run on folder
 *   open, launch configurations, `mcp.json`), `.idea/`, `.devcontainer/`, `.mcp.json`, `.cursor/`,
 *   `.claude/`, `.codex/`, `.gemini/`, and `.github/hooks/`, `.github/agents/`, `.github/workflows/`;
 * - git hooks kept in the tree: `.husky/` (its stubs in `.husky/_` run the hooks one folder up), and
 *   the parent of any `core.hooksPath` that ends in `/_`;
 * - `HEAD` at the top of a writable folder with no `.git`: with it, git would take the folder itself
 *   as a bare repository and run what its `config` names;
 * - shell and environment files: `.envrc` (direnv runs it), `.bashrc`, `.bash_profile`,
 *   `.bash_login`, `.profile`, `.zshrc`, `.zshenv`, `.zprofile`, `.zlogin`, `.gitconfig`,
 *   `.npmrc`, `.pypirc`.
 *
 * Each folder between the writable folder and a protected path (`.github` for `.github/hooks`, a
 * nested repository's folder and its parents) is pinned: bound onto itself, still writable, but a
 * mount point, which cannot be renamed or removed. Else the server renames `.git` or the folder
 * that holds it out of the way and makes a new one of its own.
 */
export const PROTECTED_NAMES: readonly { name: string; kind: 'dir' | 'file' }[] = [
  { name: '.gitmodules', kind: 'file' },
  { name: '.vscode', kind: 'dir' },
  { name: '.idea', kind: 'dir' },
  { name: '.devcontainer', kind: 'dir' },
  { name: '.mcp.json', kind: 'file' },
  { name: '.cursor', kind: 'dir' },
  { name: '.claude', kind: 'dir' },
  { name: '.codex', kind: 'dir' },
  { name: '.gemini', kind: 'dir' },
  { name: '.github/hooks', kind: 'dir' },
  { name: '.github/agents', kind: 'dir' },
  { name: '.github/workflows', kind: 'dir' },
  { name: '.husky', kind: 'dir' },
  { name: '.envrc', kind: 'file' },
  { name: '.bashrc', kind: 'file' },
  { name: '.bash_profile', kind: 'file' },
  { name: '.bash_login', kind: 'file' },
  { name: '.profile', kind: 'file' },
  { name: '.zshrc', kind: 'file' },
  { name: '.zshenv', kind: 'file' },
  { name: '.zprofile', kind: 'file' },
  { name: '.zlogin', kind: 'file' },
  { name: '.gitconfig', kind: 'file' },
  { name: '.npmrc', kind: 'file' },
  { name: '.pypirc', kind: 'file' },
];

/**
 * In a writable folder that is or holds the home, these folders of the home are protected too: ssh's
 * keys and config, gpg's, every program's configuration (git's `~/.config/git/config`, autostart), the
 * commands on the PATH, desktop entries, and MCP Host's own cache.
 */
export const HOME_NAMES: readonly string[] = ['.ssh', '.gnupg', '.config', '.local/bin', '.local/share/applications', '.cache/mcp-host'];

/** Folders not searched for nested repositories: packages installed by a package manager, and git's own. */
const NOT_SEARCHED = new Set(['node_modules', '.git']);
/** How many folders of one writable folder are searched for nested repositories at most: a root that is the home is not walked whole at each start. */
export const MAX_SEARCHED_FOLDERS = 20_000;

/**
 * Whether a path (relative to the writable folder that holds it, split into names) is protected:
 * a protected name at the folder's top, or anything in a `.git` at any depth.
 */
export function protectedNameIn(names: readonly string[]): string | undefined {
  const relative = names.join('/');
  for (const { name } of PROTECTED_NAMES) if (relative === name || relative.startsWith(`${name}/`)) return name;
  const git = names.indexOf('.git');
  return git === -1 ? undefined : names.slice(0, git + 1).join('/');
}

/** The file system the protected paths are found and made in; tests give a simulated one. */
export interface ProtectedFs {
  /** `file`, `dir`, `link` (not followed) or `none`. */
  lkind(p: string): 'file' | 'dir' | 'link' | 'other' | 'none';
  /** The entries of a folder, each a folder (not a link to one) or not. */
  readdir(p: string): { name: string; dir: boolean }[];
  readFile(p: string): string | undefined;
}

export const thisProtectedFs: ProtectedFs = {
  lkind: (p) => {
    try {
      const s = fs.lstatSync(p);
      return s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other';
    } catch {
      return 'none';
    }
  },
  readdir: (p) => {
    try {
      return fs.readdirSync(p, { withFileTypes: true }).map((e) => ({ name: e.name, dir: e.isDirectory() }));
    } catch {
      return [];
    }
  },
  readFile: (p) => {
    try {
      return fs.readFileSync(p, 'utf8');
    } catch {
      return undefined;
    }
  },
};

/** A path to protect: it exists, or it is to be made (an empty folder or file) for the time the server runs. */
export interface ProtectedPath {
  path: string;
  kind: 'dir' | 'file';
  exists: boolean;
}

/**
 * Every protected path of one writable folder: the names at its top and at the top of each
 * repository and worktree found inside at launch (existing or not), the git parts of each (`.git`
 * made as an empty folder at the folder's top where there is none). `allowed` are paths the entry's
 * `filesystem.allowWrite` names itself: left writable. `links` are the protected paths, or folders on
 * the way to one (a `.git` file's git folder included), that are symbolic links: a read-only mount
 * would land on the link's target while the link itself, an entry of the writable folder, could be
 * replaced, so the launch is refused (launcher.ts).
 */
export function protectedPathsOf(
  folder: string,
  allowed: readonly string[],
  pfs: ProtectedFs = thisProtectedFs,
  home?: string,
): { paths: ProtectedPath[]; pins: string[]; links: string[]; note?: string } {
  const out: ProtectedPath[] = [];
  const links = new Set<string>();
  /** The first link between the folder and `p` (`p` itself included), if any: the server could replace it. */
  const linkOnTheWay = (p: string) => {
    const names = path.relative(folder, p).split(path.sep);
    for (let i = 1; i <= names.length; i++) {
      const at = path.join(folder, ...names.slice(0, i));
      if (pfs.lkind(at) === 'link') return at;
    }
    return undefined;
  };
  const add = (p: string, kind: 'dir' | 'file', makeIfMissing: boolean) => {
    if (allowed.some((a) => p === a || p.startsWith(a + path.sep))) return;
    const link = linkOnTheWay(p);
    if (link) {
      links.add(link);
      return;
    }
    const found = pfs.lkind(p);
    if (found === 'none') {
      if (makeIfMissing) out.push({ path: p, kind, exists: false });
    } else out.push({ path: p, kind: found === 'dir' ? 'dir' : 'file', exists: true });
  };
  const repositories = [folder];
  let note: string | undefined;
  let searched = 0;
  const queue = [folder];
  while (queue.length) {
    const dir = queue.shift()!;
    if (++searched > MAX_SEARCHED_FOLDERS) {
      note = `only the first ${MAX_SEARCHED_FOLDERS} folders of ${folder} were searched for nested git repositories`;
      break;
    }
    const entries = pfs.readdir(dir);
    if (dir !== folder && entries.some((e) => e.name === '.git')) repositories.push(dir);
    for (const e of entries) if (e.dir && !NOT_SEARCHED.has(e.name)) queue.push(path.join(dir, e.name));
  }
  for (const repo of repositories) {
    // The folder, and each repository or worktree in it, as if it were a root: someone may open it as one.
    for (const { name, kind } of PROTECTED_NAMES) add(path.join(repo, name), kind, true);
    const dotGit = path.join(repo, '.git');
    const kind = pfs.lkind(dotGit);
    if (kind === 'none') {
      // Only the writable folder itself gets one made: a subfolder that is no repository stays as it is.
      // And `HEAD`: git takes a folder whose HEAD is valid (with objects and refs) as a bare repository, runs its config's fsmonitor.
      if (repo === folder) {
        add(dotGit, 'dir', true);
        add(path.join(folder, 'HEAD'), 'file', true);
      }
      continue;
    }
    add(dotGit, kind === 'dir' ? 'dir' : 'file', false);
    const inside = (at: string) => at.startsWith(folder + path.sep);
    let gitDir = dotGit;
    if (kind === 'file') {
      // A worktree's or submodule's pointer: the git folder it names, if it is in this folder (else another's business).
      const named = /^gitdir:\s*(.+?)\s*$/m.exec(pfs.readFile(dotGit) ?? '')?.[1];
      if (!named) continue;
      gitDir = path.resolve(repo, named);
      if (!inside(gitDir)) continue;
      const link = linkOnTheWay(gitDir);
      if (link) {
        links.add(link);
        continue;
      }
      if (pfs.lkind(gitDir) !== 'dir') continue;
      add(gitDir, 'dir', false);
    }
    for (const gitFolder of gitFolders(gitDir, pfs)) {
      for (const included of includesOf(path.join(gitFolder, 'config'), pfs)) if (inside(included)) add(included, 'file', true);
      const hooksPath = /^\s*hookspath\s*=\s*(.+?)\s*$/im
        .exec(pfs.readFile(path.join(gitFolder, 'config')) ?? '')?.[1]
        ?.replace(/^"|"$/g, '');
      if (hooksPath && !hooksPath.startsWith('~')) {
        const at = path.resolve(repo, hooksPath);
        if (inside(at)) add(at, 'dir', false);
        // husky's stubs in `.husky/_` run the hook of the same name one folder up.
        const parent = path.dirname(at);
        if (path.basename(at) === '_' && inside(parent)) add(parent, 'dir', false);
      }
    }
  }
  // A folder that is or holds the home: what the person's own programs read from there too.
  if (home && (home === folder || home.startsWith(folder + path.sep)))
    for (const name of HOME_NAMES) add(path.join(home, name), 'dir', true);
  // Outer paths first: a folder made before what is made inside it.
  out.sort((a, b) => a.path.length - b.path.length);
  const paths = [...new Map(out.map((p) => [p.path, p])).values()];
  return {
    paths,
    pins: pinsOf(
      folder,
      paths.map((p) => p.path),
    ),
    links: [...links].sort(),
    note,
  };
}

/** The folders strictly between `folder` and each path: pinned (mount points cannot be renamed), so that nothing protected is moved aside. */
export function pinsOf(folder: string, paths: readonly string[]): string[] {
  const pins = new Set<string>();
  for (const p of paths) for (let d = path.dirname(p); d !== folder && d.startsWith(folder + path.sep); d = path.dirname(d)) pins.add(d);
  return [...pins].sort((a, b) => a.length - b.length);
}

/**
 * The files a git config includes (`include.path`, `includeIf.<condition>.path`, relative to the
 * including file), followed a few levels: git reads them as its own. (`config.worktree` lies in the
 * git folder, protected whole.)
 */
function includesOf(config: string, pfs: ProtectedFs): string[] {
  const found: string[] = [];
  const queue = [config];
  for (let level = 0; queue.length && level < 5; level++) {
    const file = queue.shift()!;
    let section = '';
    for (const line of (pfs.readFile(file) ?? '').split('\n')) {
      const header = /^\s*\[\s*([a-z]+)/i.exec(line);
      if (header) section = header[1].toLowerCase();
      const value = /^\s*path\s*=\s*(.+?)\s*$/i.exec(line)?.[1]?.replace(/^"|"$/g, '');
      if (!value || (section !== 'include' && section !== 'includeif') || value.startsWith('~')) continue;
      const at = path.resolve(path.dirname(file), value);
      if (!found.includes(at)) {
        found.push(at);
        queue.push(at);
      }
    }
  }
  return found;
}

/** A repository's git folder and those of its submodules and worktrees (`.git/modules/**`, `.git/worktrees/*`). */
function gitFolders(dotGit: string, pfs: ProtectedFs): string[] {
  const found = [dotGit];
  const queue = [path.join(dotGit, 'modules'), path.join(dotGit, 'worktrees')];
  while (queue.length && found.length < 1000) {
    const dir = queue.shift()!;
    for (const e of pfs.readdir(dir)) {
      if (!e.dir) continue;
      const child = path.join(dir, e.name);
      if (pfs.lkind(path.join(child, 'HEAD')) === 'file' || pfs.lkind(path.join(child, 'gitdir')) === 'file') {
        found.push(child);
        queue.push(path.join(child, 'modules'));
      } else queue.push(child);
    }
  }
  return found;
}

/**
 * The mount points MCP Host made on the host for protected names that did not exist are shared by
 * every sandbox on the machine that binds them, in this process or another (two windows, the CLI
 * and VS Code, CI jobs on one checkout): removing one while another sandbox has it bound would
 * detach that sandbox's read-only mount and leave the name writable there. So they are kept in a
 * registry folder of MCP Host's (`made.json`: each made path, its inode and kind; one claim file
 * per running launch: the paths it binds), changed only under a lock across processes
 * (../../files/auditLock.ts). A launch claims what it binds; at its end it drops its claim and
 * removes each made path no live claim holds (a claim whose process is gone is dropped) and that
 * is still what MCP Host made: an empty folder, or a file with what it was made with, the same inode.
 */
interface Made {
  ino: number;
  dev: number;
  kind: 'dir' | 'file';
  /** Recorded before it is made (its inode unknown yet): a process killed while it made the mount points left this. */
  pending?: true;
}
const MADE_FILE = 'made.json';
const CLAIM = /^claim-(\d+)-[0-9a-f]+\.json$/;

/** The registry's lock is held for a scan of the roots (up to MAX_SEARCHED_FOLDERS folders): a holder this old is gone. */
const REGISTRY_LOCK = { staleMs: 60_000, timeoutMs: 90_000 };

/** Runs `step` holding the registry's lock. */
export async function withMountRegistry<T>(registry: string, step: () => T): Promise<T> {
  fs.mkdirSync(registry, { recursive: true, mode: 0o700 });
  const release = await acquireLock(path.join(registry, 'mounts'), REGISTRY_LOCK);
  try {
    return step();
  } finally {
    release();
  }
}

/** The registry's files are read and written as policy files: no link followed, the temporary file made anew (O_EXCL), never one found there. */
function readMade(registry: string): Record<string, Made> {
  try {
    return JSON.parse(readPolicyFileSync(path.join(registry, MADE_FILE), 16 * 1024 * 1024)) as Record<string, Made>;
  } catch {
    return {};
  }
}

function writeMade(registry: string, made: Record<string, Made>): void {
  const file = path.join(registry, MADE_FILE);
  const temporary = `${file}.${process.pid}`;
  // Whatever is in the temporary file's place (a link planted there) goes first; unlink removes a link, never its target.
  fs.rmSync(temporary, { force: true });
  const { fd } = openPolicyFile(temporary, 'create', { mode: 0o600 });
  try {
    fs.writeFileSync(fd, JSON.stringify(made));
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, file);
}

/**
 * Makes the missing paths (parents first) and records them; what could not be made (the folder is
 * not writable) is left out. Each is made one name at a time from the root, following no link
 * (nofollow.ts): a folder on the way swapped for a link meanwhile (by a server already running in
 * another sandbox on the same root) refuses the launch with NotFollowedError, never makes anything
 * where the link leads. All are recorded as pending first, so that a process killed halfway leaves
 * none that the next release does not know (it removes a pending one only if it is an empty folder
 * or a file with what MCP Host makes); then each with the inode it got. `onStep` is for tests.
 * Under the registry's lock.
 */
export function makeMountPoints(paths: readonly ProtectedPath[], registry: string, onStep?: StepHook): string[] {
  const record = readMade(registry);
  const made: string[] = [];
  // Parents that do not exist (`.github` for `.github/hooks`) are made, and recorded, too.
  const planned: { path: string; kind: 'dir' | 'file'; parents: string[] }[] = [];
  for (const p of paths) {
    if (p.exists) continue;
    const parents: string[] = [];
    for (let d = path.dirname(p.path); !fs.existsSync(d) && !parents.includes(d); d = path.dirname(d)) parents.unshift(d);
    planned.push({ path: p.path, kind: p.kind, parents });
    for (const d of parents) record[d] ??= { ino: 0, dev: 0, kind: 'dir', pending: true };
    record[p.path] ??= { ino: 0, dev: 0, kind: p.kind, pending: true };
  }
  if (!planned.length) return made;
  writeMade(registry, record);
  try {
    for (const p of planned) {
      let entries: MadeEntry[];
      try {
        entries = makeChecked(p.path, p.kind, placeholderOf(p.path), onStep);
      } catch (e) {
        if (e instanceof NotFollowedError) throw e;
        // The folder is not writable, or someone made it meanwhile as something else: what exists now is protected at the next start.
        continue;
      }
      for (const { path: at, ino, dev, kind } of entries) {
        record[at] = { ino, dev, kind };
        made.push(at);
      }
    }
  } finally {
    // What could not be made is someone else's: no longer recorded; what was made before a refusal is, so that the release removes it.
    for (const p of planned) for (const at of [...p.parents, p.path]) if (record[at]?.pending) delete record[at];
    writeMade(registry, record);
  }
  return made;
}

/** Records that a launch binds `uses` (every protected and pinned path); the claim's file, for releaseMountPoints. Under the registry's lock. */
export function claimMountPoints(uses: readonly string[], registry: string): string {
  const file = path.join(registry, `claim-${process.pid}-${Math.random().toString(16).slice(2)}.json`);
  fs.writeFileSync(file, JSON.stringify({ pid: process.pid, host: os.hostname(), uses }), { mode: 0o600, flag: 'wx' });
  return file;
}

/** What a made file holds: an empty JSON object for a JSON file (VS Code reads a workspace's `.mcp.json` and reports an empty one as broken), else nothing. */
const placeholderOf = (p: string) => (p.endsWith('.json') ? '{}\n' : '');

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Every path a live launch's claim binds (a claim whose process is gone holds nothing; with
 * `dropDead`, under the registry's lock, its file is removed).
 */
export function heldMountPoints(registry: string, { dropDead = false } = {}): Set<string> {
  const held = new Set<string>();
  let names: string[];
  try {
    names = fs.readdirSync(registry);
  } catch {
    return held;
  }
  for (const name of names) {
    if (!CLAIM.test(name)) continue;
    const file = path.join(registry, name);
    try {
      const { pid, host, uses } = JSON.parse(fs.readFileSync(file, 'utf8')) as { pid: number; host: string; uses: string[] };
      if (host === os.hostname() && !alive(pid)) {
        if (dropDead) fs.rmSync(file, { force: true });
      } else for (const p of uses) held.add(p);
    } catch {
      // Not a claim of ours, or half written: it holds nothing.
    }
  }
  return held;
}

/**
 * Drops a launch's claim (if any), then removes every made path that no live claim holds and that
 * is still empty and the same (deepest first). Under the registry's lock.
 */
export function releaseMountPoints(registry: string, claim?: string): void {
  if (claim) fs.rmSync(claim, { force: true });
  const held = heldMountPoints(registry, { dropDead: true });
  const record = readMade(registry);
  for (const p of Object.keys(record).sort((a, b) => b.length - a.length)) {
    if (held.has(p)) continue;
    const known = record[p];
    delete record[p];
    // Reached without following a link, and only if still the same, empty or as made; else it is the person's now.
    removeIfAsMade(p, known, placeholderOf(p));
  }
  writeMade(registry, record);
}
