/**
 * What a stdio server's process inherits of the environment it is started from.
 *
 * The editor's extension host carries VS Code's IPC hooks (`VSCODE_IPC_HOOK*`, with which a process
 * can drive the editor), Electron's switches and whatever tokens the person's login put there; a
 * server started from it gets only a small base every program needs to run (the same facts the
 * official SDK's stdio client keeps: where programs are, who and where the user is, the terminal,
 * the language, the temporary folder, and Windows' system folders) plus the variables its entry
 * names in `env`/`envFile`. The command-line client is a tool the person runs in their own shell:
 * it passes that shell's environment on, minus VS Code's hooks, which are there only when it was
 * started from VS Code's terminal.
 */

import { createMasker } from '../policy/mask';
import type { Masker } from '../policy/types';
import { isSecretName } from './secrets';

/** What a stdio server started by the editor inherits on Linux and macOS (and `LC_*`); the docs list it (test/core/docs.test.ts). */
export const POSIX_BASE = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'LANG', 'TMPDIR', 'TZ'];
/** The same on Windows. */
export const WINDOWS_BASE = [
  'PATH',
  'PATHEXT',
  'APPDATA',
  'LOCALAPPDATA',
  'HOMEDRIVE',
  'HOMEPATH',
  'USERPROFILE',
  'USERNAME',
  'USERDOMAIN',
  'SYSTEMROOT',
  'SYSTEMDRIVE',
  'WINDIR',
  'COMSPEC',
  'TEMP',
  'TMP',
  'PROGRAMFILES',
  'PROGRAMFILES(X86)',
  'PROGRAMDATA',
  'PROCESSOR_ARCHITECTURE',
  'NUMBER_OF_PROCESSORS',
];

/** VS Code's and Electron's own variables: never for a server, whoever starts it. */
export function isEditorHook(name: string): boolean {
  const upper = name.toUpperCase();
  return upper.startsWith('VSCODE_') || upper.startsWith('ELECTRON_');
}

/** The base a server started by the editor inherits (the entry's own `env` goes over it). */
export function editorServerEnvironment(parent: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): NodeJS.ProcessEnv {
  const windows = platform === 'win32';
  const base = new Set(windows ? WINDOWS_BASE : POSIX_BASE);
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined || isEditorHook(name)) continue;
    // Windows' names are case-insensitive (`Path`, `SystemRoot`): kept as spelled, matched upper-case.
    const key = windows ? name.toUpperCase() : name;
    if (base.has(key) || (!windows && name.startsWith('LC_'))) kept[name] = value;
  }
  return kept;
}

/** The environment the command-line client passes on: the shell's, minus VS Code's hooks. */
export function cliServerEnvironment(parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(parent).filter(([name, value]) => value !== undefined && !isEditorHook(name)));
}

const BASE_NAMES = new Set([...POSIX_BASE, ...WINDOWS_BASE]);

/** Names that hold a secret whatever their value looks like: a DSN (Sentry's), a CI job's JWT, a webhook, a netrc file, a connection string. */
const SECRET_HOLDER_NAME = /(?:^|[_-])(?:DSN|JWT|NETRC)(?:[_-]|$)|WEBHOOK|CONN(?:ECTION)?_?STR(?:ING)?/i;

/** The masking's own detectors (../policy/mask.ts), without the person's patterns: made on the first sandboxed launch. */
let detectors: Masker | undefined;

/** Whether a value is a URL with a user or a password in it (`https://token@host`, `redis://:pw@host`): the userinfo of a URL is a credential. */
function hasUserinfo(value: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9+.-]{0,31}:\/\//.test(value)) return false;
  try {
    const url = new URL(value.trim());
    return url.username !== '' || url.password !== '';
  } catch {
    return false;
  }
}

/**
 * Whether a variable of the environment a sandboxed server is started from (the CLI passes the
 * shell's on) is kept from it. By its name: every name `isSecretName` takes for a secret's
 * (containing token, key, secret, password, pwd, credential, auth, cookie or session:
 * `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `SSH_AUTH_SOCK`), but the shell's `PWD` and `OLDPWD`;
 * the other agents and tickets (`GPG_AGENT_INFO`, `KRB5CCNAME`); and the names of secrets that
 * name no secret (`SENTRY_DSN`, `CI_JOB_JWT`, `SLACK_WEBHOOK_URL`, `NETRC`, `…_CONNECTION_STRING`).
 * By its value, whatever its name: a URL with a user or a password (`DATABASE_URL=postgres://u:pw@h/db`,
 * `https://token@host`), and whatever the masking's detectors take for a secret (a JWT, a GitHub,
 * GitLab, Slack, Stripe, Google or AWS key, a Slack webhook, a private key, `AccountKey=…` in a
 * connection string). A server's entry that names one in its own `env` gets it.
 */
export function isWithheldFromSandbox(name: string, value?: string): boolean {
  const upper = name.toUpperCase();
  if (upper === 'PWD' || upper === 'OLDPWD') return false;
  if (isSecretName(name) || upper === 'GPG_AGENT_INFO' || upper === 'KRB5CCNAME' || SECRET_HOLDER_NAME.test(name)) return true;
  // The base every program needs (PATH, HOME, …) is paths and names, whatever a folder is called (`/opt/sk-…/bin`).
  if (!value || BASE_NAMES.has(upper) || upper.startsWith('LC_')) return false;
  detectors ??= createMasker().masker;
  return hasUserinfo(value) || detectors.maskText(value).found.length > 0;
}

/** The names of `parent` a sandboxed server does not inherit (isWithheldFromSandbox), sorted: for the verbose line, never the values. */
export function withheldFromSandbox(parent: NodeJS.ProcessEnv): string[] {
  return Object.entries(parent)
    .filter(([name, value]) => isWithheldFromSandbox(name, value))
    .map(([name]) => name)
    .sort();
}

/** The environment a sandboxed server inherits: `parent` without what isWithheldFromSandbox keeps out. */
export function withoutSecrets(parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(parent).filter(([name, value]) => !isWithheldFromSandbox(name, value)));
}
