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

/**
 * Names a sandboxed server does not inherit from the environment it is started from (the CLI
 * passes the shell's on): every name `isSecretName` takes for a secret's (containing token, key,
 * secret, password, pwd, credential, auth, cookie or session: `GITHUB_TOKEN`,
 * `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `SSH_AUTH_SOCK`, `OPENAI_API_KEY`, `NPM_TOKEN`), but
 * the shell's `PWD` and `OLDPWD`, and the other agents and tickets: `GPG_AGENT_INFO`, `KRB5CCNAME`.
 * A server's entry that names one in its own `env` gets it.
 */
export function isWithheldFromSandbox(name: string): boolean {
  const upper = name.toUpperCase();
  if (upper === 'PWD' || upper === 'OLDPWD') return false;
  return isSecretName(name) || upper === 'GPG_AGENT_INFO' || upper === 'KRB5CCNAME';
}

/** The environment a sandboxed server inherits: `parent` without the names isWithheldFromSandbox keeps out. */
export function withoutSecrets(parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(parent).filter(([name]) => !isWithheldFromSandbox(name)));
}
