import { createHash } from 'node:crypto';
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
  /**
   * MCP Host's own folder for the caches of sandboxed launchers (`npm/`, `uv/` inside), which no
   * unsandboxed program uses; by default `~/.cache/mcp-host/sandbox` (`$XDG_CACHE_HOME`, on macOS
   * `~/Library/Caches`).
   */
  sandboxCache?: string;
  /** `none` for a path that does not exist; a symbolic link is followed. */
  kind(p: string): 'file' | 'dir' | 'none';
  realpath(p: string): string;
}

export const thisHost = (): HostFacts => ({
  platform: process.platform,
  home: os.homedir(),
  sandboxCache: path.join(
    process.platform === 'darwin'
      ? path.join(os.homedir(), 'Library', 'Caches')
      : (process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache')),
    'mcp-host',
    'sandbox',
  ),
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

/** Interpreters that run a script named in their arguments (scriptIndex finds which). */
export const INTERPRETERS = /^(node|nodejs|bun|deno|python\d*(\.\d+)?|tsx)(\.exe)?$/i;

/** The options whose value is the next argument, and those after which no script follows (the code is in the arguments, or none runs). */
interface ScriptRules {
  valued: RegExp;
  noScript: RegExp;
  /** Subcommands that run a script (`deno run x.ts`, `bun run x.ts`): passed over. */
  subcommands?: RegExp;
  /**
   * Where known, the options that take no value: any other option without an attached `=value`
   * may take the next argument (a V8 option, one of a newer Node), so no argument is taken for the
   * script rather than a guess (the narrow reach: a script outside the roots is then not readable).
   */
  flags?: RegExp;
}

const NODE_RULES: ScriptRules = {
  valued:
    /^(-r|--require|--import|--loader|--experimental-loader|-C|--conditions|--input-type|--env-file|--env-file-if-exists|--title|--inspect-port|--debug-port|--redirect-warnings|--diagnostic-dir|--report-dir|--report-directory|--report-filename|--report-signal|--secure-heap|--secure-heap-min|--openssl-config|--icu-data-dir|--dns-result-order|--watch-path|--unhandled-rejections|--experimental-config-file|--disable-warning|--localstorage-file|--test-name-pattern|--test-reporter|--test-reporter-destination|--stack-trace-limit|--allow-fs-read|--allow-fs-write|--build-snapshot-config|--cpu-prof-dir|--cpu-prof-interval|--cpu-prof-name|--disable-proto|--experimental-default-type|--experimental-policy|--experimental-sea-config|--heap-prof-dir|--heap-prof-interval|--heap-prof-name|--heapsnapshot-near-heap-limit|--heapsnapshot-signal|--inspect-publish-uid|--max-http-header-size|--network-family-autoselection-attempt-timeout|--policy-integrity|--snapshot-blob|--test-concurrency|--test-shard|--test-timeout|--tls-cipher-list|--tls-keylog|--trace-event-categories|--trace-event-file-pattern|--trace-require-module|--use-largepages|--v8-pool-size|--experimental-test-coverage-include|--experimental-test-coverage-exclude|--test-isolation|--test-global-setup|--test-coverage-include|--test-coverage-exclude)$/,
  noScript: /^(-e|--eval|-p|--print|-c|--check|-i|--interactive|--test|--run)(=|$)|^-[a-z]*[ep]$/,
  flags: new RegExp(
    `^--(${[
      'allow-addons|allow-child-process|allow-wasi|allow-worker|build-snapshot|completion-bash|cpu-prof|disable-wasm-trap-handler',
      'enable-etw-stack-walking|enable-fips|enable-source-maps|experimental-[a-z-]+|expose-gc|force-context-aware|force-fips',
      'frozen-intrinsics|heap-prof|insecure-http-parser|inspect|inspect-brk|inspect-wait|jitless|no-[a-z-]+|node-memory-debug',
      'openssl-legacy-provider|openssl-shared-config|pending-deprecation|permission|preserve-symlinks|preserve-symlinks-main',
      'prof|report-compact|report-exclude-network|report-on-fatalerror|report-on-signal|report-uncaught-exception|test-force-exit',
      'test-only|throw-deprecation|trace-atomics-wait|trace-deprecation|trace-exit|trace-promises|trace-sigint|trace-sync-io',
      'trace-tls|trace-uncaught|trace-warnings|track-heap-objects|use-bundled-ca|use-openssl-ca|watch|watch-preserve-output',
      'zero-fill-buffers|harmony|harmony-[a-z-]+',
    ].join('|')})$`,
  ),
};
/**
 * Deno's and Bun's options as their `run` reads them. Options whose value is optional and attached
 * with `=` only in some versions and the next argument in others (Deno's `--lock`, `--env-file`,
 * `--v8-flags`; Bun's `--config`, `--inspect`) are in neither list: without an attached value,
 * no argument is taken for the script.
 */
const DENO_RULES: ScriptRules = {
  valued: /^(-c|--config|--import-map|--cert|--location|--seed|-L|--log-level|--ext)$/,
  noScript: /^(eval|repl|task|test|fmt|lint|check|install|compile|bench|doc|info|upgrade|--eval)$/,
  subcommands: /^(run|serve)$/,
  // Deno's permission and other optional values need `=` (`--allow-read=/tmp`, `--watch=src`, `--check=all`, `-r=…`).
  flags:
    /^(-A|-R|-W|-N|-E|-S|-I|-P|-q|-r|--allow-[a-z-]+|--deny-[a-z-]+|--no-[a-z-]+|--unstable(-[a-z-]+)?|--quiet|--reload|--watch|--watch-hmr|--check|--cached-only|--frozen|--inspect|--inspect-brk|--inspect-wait|--node-modules-dir|--vendor|--unsafely-ignore-certificate-errors|--permission-set)$/,
};
const BUN_RULES: ScriptRules = {
  valued:
    /^(-r|--preload|--require|--import|--cwd|--env-file|--conditions|-d|--define|-l|--loader|--tsconfig-override|--main-fields|--extension-order|--jsx-factory|--jsx-fragment|--jsx-import-source|--jsx-runtime|--title|--port|--dns-result-order|--max-http-header-size|--console-depth|--unhandled-rejections|--user-agent|--shell|--elide-lines|-F|--filter)$/,
  noScript: /^(-e|--eval|-p|--print)(=|$)/,
  subcommands: /^run$/,
  flags:
    /^(-b|--bun|-i|--hot|--watch|--no-clear-screen|--smol|--silent|--if-present|--no-install|--prefer-offline|--prefer-latest|--no-macros|--no-deprecation|--throw-deprecation|--no-addons|--expose-gc|--no-env-file|--zero-fill-buffers|--experimental-[a-z-]+)$/,
};

/** Python's options: `-c` and `-m` end them (code or a module, no file); `-W` and `-X` take a value, attached or next. */
function pythonScriptIndex(args: readonly string[]): number {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') return i + 1 < args.length ? i + 1 : -1;
    if (a === '-') return -1;
    if (!a.startsWith('-')) return i;
    if (a.startsWith('--')) {
      if (a === '--check-hash-based-pycs') i++;
      continue;
    }
    for (let c = 1; c < a.length; c++) {
      if (a[c] === 'c' || a[c] === 'm') return -1;
      if (a[c] === 'W' || a[c] === 'X') {
        if (c === a.length - 1) i++;
        break;
      }
    }
  }
  return -1;
}

/**
 * Where the script an interpreter runs sits in its arguments, read as the interpreter reads them:
 * options (and the value of those that take the next argument) are passed over; `--eval`, `-e`,
 * `-p`, `-c`, `-m` and their kind mean the code is not a file, and nothing after them is the
 * script; `--` makes the next argument the script. -1 when no argument is the script.
 */
export function scriptIndex(interpreter: string, args: readonly string[]): number {
  const name = interpreter.toLowerCase().replace(/\.exe$/, '');
  if (/^python/.test(name)) return pythonScriptIndex(args);
  const rules = name === 'deno' ? DENO_RULES : name === 'bun' ? BUN_RULES : INTERPRETERS.test(name) ? NODE_RULES : undefined;
  if (!rules) return -1;
  const first = rules.subcommands?.test(args[0] ?? '') ? 1 : 0;
  for (let i = first; i < args.length; i++) {
    const a = args[i];
    if (a === '--') return i + 1 < args.length ? i + 1 : -1;
    if (a === '-' || rules.noScript.test(a)) return -1;
    if (!a.startsWith('-')) return i;
    if (rules.valued.test(a)) i++;
    else if (rules.flags && !a.includes('=') && !rules.flags.test(a)) return -1;
  }
  return -1;
}

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
 * prefix of a `bin/` folder (a runtime's `lib/` sits beside it) unless that prefix is a folder
 * directly in the home (`~/.local`, `~/.cargo`, `~/go` hold keyrings, tokens and everything else
 * installed there: then the `bin/` folder only), else the file's own folder, else only the file.
 */
function installationOf(file: string, home: string, packageRoot?: (dir: string) => string | undefined): string[] {
  const dir = path.dirname(file);
  const tooWide = (p: string) => p === path.parse(p).root || isWithin(home, p);
  const sharedPrefix = (p: string) => tooWide(p) || path.dirname(p) === home;
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
  const prefix = path.basename(dir) === 'bin' && !sharedPrefix(path.dirname(dir)) ? path.dirname(dir) : undefined;
  const candidates = [project, prefix, dir];
  const found = [candidates.find((c): c is string => c !== undefined && !tooWide(c)) ?? file];
  // `pip install --user`: the command in ~/.local/bin imports from Python's user site, ~/.local/lib.
  if (dir === path.join(home, '.local', 'bin')) found.push(path.join(home, '.local', 'lib'));
  return found;
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

/** A launcher's cache as the sandbox seeds it: the person's (`from`), copied into MCP Host's own (`to`). */
export interface CacheSeed {
  from: string;
  to: string;
}

export interface ComputedReach {
  reach: SandboxReach;
  /** The command as found on the PATH; undefined where it is not. */
  command: string | undefined;
  /** The arguments, the script by its absolute path. */
  args: string[];
  /** Variables the sandbox sets for the server: its launcher's own cache. */
  env: Record<string, string>;
  seeds: CacheSeed[];
}

/**
 * The file an interpreter runs for a script argument, found as it finds it: Node and its kind try
 * the name, then with `.js`, `.mjs`, `.cjs`, then a folder's `index.js`; the others the name only.
 */
function scriptFile(interpreter: string, file: string, host: HostFacts): string | undefined {
  const nodeLike = !/^python|^deno/i.test(interpreter);
  const candidates = nodeLike ? [file, `${file}.js`, `${file}.mjs`, `${file}.cjs`, path.join(file, 'index.js')] : [file];
  return candidates.find((c) => host.kind(c) === 'file');
}

/**
 * What the sandbox lets the server reach: the roots read-write; its command's installation, the
 * runtime that runs it and its script's project read-only; the cache its launcher installs into
 * read-write; and the person's `sandbox` settings. Paths that do not exist are left out.
 */
export function computeReach(req: SandboxRequest, host: HostFacts): ComputedReach {
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
  const at = INTERPRETERS.test(name) ? scriptIndex(name, args) : -1;
  const file = at === -1 ? undefined : scriptFile(name, path.resolve(cwd, args[at]), host);
  if (file) {
    const script = host.realpath(file);
    readOnly.push(...installationOf(script, home, packageRootOf(host)));
    // The process may start in another folder (its cwd is outside the reach): the script by its absolute path.
    args[at] = script;
  }
  // The launchers' caches are MCP Host's own, seeded from the person's (launcher.ts): whatever the
  // environment names is only where the seed comes from, and only if it is such a cache.
  // One cache per launch identity (the command, its arguments, its roots, the folders and domains its settings
  // add or take away): a server that rewrites a package in its cache changes only what it runs itself, never
  // what another sandboxed server runs with another reach.
  const sorted = (list: readonly string[] | undefined) => [...(list ?? [])].sort();
  const fsSettingsOf = req.settings?.filesystem ?? {};
  const networkOf = req.settings?.network ?? {};
  const reachSettings = [
    sorted(fsSettingsOf.allowWrite),
    sorted(fsSettingsOf.denyRead),
    sorted(fsSettingsOf.denyWrite),
    sorted(networkOf.allowedDomains),
    sorted(networkOf.deniedDomains),
  ];
  const identity = createHash('sha256')
    .update(JSON.stringify([command ?? req.command, args, roots, reachSettings]))
    .digest('hex')
    .slice(0, 16);
  const cacheRoot = path.join(host.sandboxCache ?? path.join(home, '.cache', 'mcp-host', 'sandbox'), identity);
  // A cache the server could write is no source: it would choose what is copied, and where links lead.
  const writable = [...roots, ...(req.settings?.filesystem?.allowWrite ?? []).map((p) => host.realpath(expand(p, home, cwd)))];
  const ownCaches: string[] = [];
  const env: Record<string, string> = {};
  const seeds: CacheSeed[] = [];
  const seed = (variable: string, named: string | undefined, fallback: string, marker: string, to: string) => {
    const from = named === undefined ? fallback : expand(named, home, cwd);
    const real = host.realpath(from);
    if (writable.some((w) => isWithin(real, w)))
      notes.push(`${variable}=${named ?? from} is in a folder the server may write: not copied into its own cache`);
    else if (real !== path.parse(real).root && !isWithin(home, real) && host.kind(path.join(real, marker)) !== 'none')
      seeds.push({ from: real, to });
    else if (named !== undefined)
      notes.push(`${variable}=${named} is not a cache folder (never the home, / or a folder above them): not used`);
  };
  if (NPM_LAUNCHERS.test(name)) {
    const cache = path.join(cacheRoot, 'npm');
    ownCaches.push(cache);
    env.npm_config_cache = cache;
    const named = req.env.npm_config_cache ?? req.env.NPM_CONFIG_CACHE;
    seed(
      req.env.npm_config_cache !== undefined ? 'npm_config_cache' : 'NPM_CONFIG_CACHE',
      named,
      path.join(home, '.npm'),
      '_cacache',
      cache,
    );
  }
  if (UV_LAUNCHERS.test(name)) {
    const cache = path.join(cacheRoot, 'uv');
    ownCaches.push(cache);
    env.UV_CACHE_DIR = cache;
    seed('UV_CACHE_DIR', req.env.UV_CACHE_DIR, path.join(home, '.cache', 'uv'), 'CACHEDIR.TAG', cache);
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
  const reachable = [...readWrite, ...readOnly, ...ownCaches].some((p) => isWithin(cwd, p));
  return {
    command,
    args,
    env,
    seeds,
    reach: {
      readWrite: [...existing(readWrite), ...ownCaches],
      readOnly: existing(readOnly),
      protected: [],
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
