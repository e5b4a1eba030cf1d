import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { domainPattern } from './domains';
import type { SandboxReach, SandboxSettings } from './settings';

/** What the sandbox should hold: the server's command line and the folders that are its boundary. */
export interface SandboxRequest {
  command: string;
  args: readonly string[];
  cwd?: string;
  /** The environment the server gets (its PATH finds the command; npm's cache variable is honoured). */
  env: NodeJS.ProcessEnv;
  /** Absolute folders the server may read and write: the roots. */
  roots: readonly string[];
  settings?: SandboxSettings;
}

/** The facts about this machine the reach is computed from; tests give a simulated one. */
export interface HostFacts {
  platform: NodeJS.Platform;
  home: string;
  /** `none` for a path that does not exist; a symbolic link is followed. */
  kind(p: string): 'file' | 'dir' | 'none';
  realpath(p: string): string;
}

export const thisHost = (): HostFacts => ({
  platform: process.platform,
  home: os.homedir(),
  kind: (p) => {
    try {
      const s = fs.statSync(p);
      return s.isDirectory() ? 'dir' : 'file';
    } catch {
      return 'none';
    }
  },
  realpath: (p) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return p;
    }
  },
});

/** Interpreters whose first non-option argument is the server's script. */
export const INTERPRETERS = /^(node|nodejs|bun|deno|python\d*(\.\d+)?|tsx)(\.exe)?$/i;
/** Launchers that install the server's package into a cache first: the cache they need, read-write. */
const NPM_LAUNCHERS = /^(npx|npm|pnpm|pnpx)(\.cmd)?$/i;
const UV_LAUNCHERS = /^(uvx|uv)(\.exe)?$/i;

export const isWithin = (child: string, parent: string) => {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** Finds a command on the PATH the server gets, as the system would; undefined when it is not there. */
export function findOnPath(command: string, env: NodeJS.ProcessEnv, host: HostFacts, cwd?: string): string | undefined {
  if (command.includes('/') || command.includes('\\')) {
    const abs = path.resolve(cwd ?? '/', command);
    return host.kind(abs) === 'file' ? host.realpath(abs) : undefined;
  }
  const dirs = (env.PATH ?? env.Path ?? '').split(host.platform === 'win32' ? ';' : ':').filter(Boolean);
  for (const dir of dirs) {
    const candidate = path.join(dir, command);
    if (host.kind(candidate) === 'file') return host.realpath(candidate);
  }
  return undefined;
}

/**
 * The folder that holds a program's installation, never the home folder or one above it: the
 * prefix of a `bin/` folder (a runtime's `lib/` sits beside it), else the file's own folder, else
 * only the file.
 */
function installationOf(file: string, home: string, packageRoot?: (dir: string) => string | undefined): string[] {
  const dir = path.dirname(file);
  const tooWide = (p: string) => p === path.parse(p).root || isWithin(home, p);
  const inNodeModules = file.split(path.sep).indexOf('node_modules');
  if (inNodeModules > 0) {
    // Everything the package may import: the node_modules folder it was installed into.
    const modules = file
      .split(path.sep)
      .slice(0, inNodeModules + 1)
      .join(path.sep);
    if (!tooWide(modules)) return [modules];
  }
  const project = packageRoot?.(dir);
  if (project !== undefined && tooWide(project)) {
    // The project holds the home (a test harness's home, a project in ~ itself): what the script
    // imports and its own folder, never the whole project and the home inside it.
    return [path.join(project, 'node_modules'), dir].filter((p) => !tooWide(p));
  }
  const candidates = [project, path.basename(dir) === 'bin' ? path.dirname(dir) : undefined, dir];
  return [candidates.find((c): c is string => c !== undefined && !tooWide(c)) ?? file];
}

/** The nearest folder at or above `dir` with a package.json (a script's project, with its node_modules). */
function packageRootOf(host: HostFacts): (dir: string) => string | undefined {
  return (dir) => {
    for (let d = dir; ; d = path.dirname(d)) {
      if (host.kind(path.join(d, 'package.json')) === 'file') return d;
      if (path.dirname(d) === d) return undefined;
    }
  };
}

/** The host of npm's registry (`npm_config_registry`, else npm's default), as a domain entry. */
function npmRegistryHost(env: NodeJS.ProcessEnv): string | undefined {
  const url = env.npm_config_registry ?? env.NPM_CONFIG_REGISTRY ?? 'https://registry.npmjs.org/';
  try {
    return domainPattern(new URL(url).hostname);
  } catch {
    return undefined;
  }
}

/** `~/x` is the home's x; other relative paths are the cwd's. */
function expand(p: string, home: string, cwd: string): string {
  if (p === '~') return home;
  if (p.startsWith('~/')) return path.join(home, p.slice(2));
  return path.resolve(cwd, p);
}

/**
 * What the sandbox lets the server reach: the roots read-write; its command's installation, the
 * runtime that runs it and its script's project read-only; the cache its launcher installs into
 * read-write; and the person's `sandbox` settings. Paths that do not exist are left out.
 */
export function computeReach(req: SandboxRequest, host: HostFacts): { reach: SandboxReach; command: string | undefined; args: string[] } {
  const home = host.realpath(host.home);
  const roots = req.roots.map((r) => host.realpath(r)).filter((r) => host.kind(r) === 'dir');
  const cwd = req.cwd ? host.realpath(req.cwd) : (roots[0] ?? home);
  const notes: string[] = [];
  const readOnly: string[] = [];
  const readWrite = [...roots];
  const command = findOnPath(req.command, req.env, host, cwd);
  const name = path.basename(req.command);
  if (command) {
    readOnly.push(...installationOf(command, home));
    // A script with a `#!/usr/bin/env node` line (npx, a package's bin) runs on the node the PATH finds.
    const node = findOnPath(host.platform === 'win32' ? 'node.exe' : 'node', req.env, host, cwd);
    if (node && (NPM_LAUNCHERS.test(name) || command.endsWith('.js') || command.endsWith('.mjs') || command.endsWith('.cjs')))
      readOnly.push(...installationOf(node, home));
  }
  const args = [...req.args];
  if (INTERPRETERS.test(name)) {
    const at = args.findIndex((a) => !a.startsWith('-'));
    const file = at === -1 ? undefined : path.resolve(cwd, args[at]);
    if (file && host.kind(file) === 'file') {
      const script = host.realpath(file);
      readOnly.push(...installationOf(script, home, packageRootOf(host)));
      // The process may start in another folder (its cwd is outside the reach): the script by its absolute path.
      args[at] = script;
    }
  }
  if (NPM_LAUNCHERS.test(name)) {
    const cache = req.env.npm_config_cache ?? req.env.NPM_CONFIG_CACHE ?? path.join(host.home, '.npm');
    readWrite.push(expand(cache, home, cwd));
  }
  if (UV_LAUNCHERS.test(name)) {
    readWrite.push(req.env.UV_CACHE_DIR ? expand(req.env.UV_CACHE_DIR, home, cwd) : path.join(home, '.cache', 'uv'));
    readOnly.push(path.join(home, '.local', 'share', 'uv'));
  }
  const fsSettings = req.settings?.filesystem ?? {};
  const settle = (list: string[] | undefined) => (list ?? []).map((p) => expand(p, home, cwd));
  readWrite.push(...settle(fsSettings.allowWrite));
  const network = req.settings?.network ?? {};
  const patterns = (list: string[] | undefined, key: string) =>
    (list ?? []).flatMap((entry) => {
      const pattern = domainPattern(entry);
      if (pattern === undefined) notes.push(`network.${key}: ${JSON.stringify(entry)} is neither a host nor *.suffix, left out`);
      return pattern === undefined ? [] : [pattern];
    });
  const allowedDomains = patterns(network.allowedDomains, 'allowedDomains');
  const deniedDomains = patterns(network.deniedDomains, 'deniedDomains');
  // With a network, npx may fetch a package its cache lacks, from the registry its configuration names (~/.npmrc is not
  // visible inside): that host is added, and said so. With none, it stays offline (launcher.ts).
  const launcherDomains: string[] = [];
  if (allowedDomains.length && NPM_LAUNCHERS.test(name)) {
    const registry = npmRegistryHost(req.env);
    if (registry && !allowedDomains.includes(registry)) launcherDomains.push(registry);
  }
  const existing = (list: string[]) => [...new Set(list)].filter((p) => host.kind(p) !== 'none');
  // A cwd the server cannot see is no place to start: its first root then.
  const reachable = [...readWrite, ...readOnly].some((p) => isWithin(cwd, p));
  return {
    command,
    args,
    reach: {
      readWrite: existing(readWrite),
      readOnly: existing(readOnly),
      denyRead: existing(settle(fsSettings.denyRead)),
      denyWrite: existing(settle(fsSettings.denyWrite)),
      allowedDomains: [...allowedDomains, ...launcherDomains],
      deniedDomains,
      launcherDomains,
      cwd: reachable ? cwd : (roots[0] ?? '/'),
      home,
      notes,
    },
  };
}
