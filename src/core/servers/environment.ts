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

import { createMasker, type Masker } from '../scan/mask';
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
const SECRET_HOLDER_NAME = /(?:^|[_-])(?:DSN|JWT|NETRC|PASS|PW)(?:[_-]|$)|PASSPHRASE|WEBHOOK|CONN(?:ECTION)?_?STR(?:ING)?/i;

/** The masking's own detectors (../scan/mask.ts), without the person's patterns: made on the first sandboxed launch. */
let detectors: Masker | undefined;

/**
 * A URL's userinfo anywhere in a value (`https://token@host`, ` redis://:pw@host`, a list of
 * URLs, `//user:pw@server/share`), or a whole value `user:password@host[:port][/…]` with no scheme
 * (a proxy's; not `mailto:me@host`): the userinfo of a URL is a credential. A docker digest (`node:22@sha256:…`) is no host and port.
 */
const URL_USERINFO = /(?:^|[^A-Za-z0-9+.-])(?:[A-Za-z][A-Za-z0-9+.-]{0,31}:)?\/\/[^\s/?#@]+@[^\s/?#@]/;
const BARE_USERINFO = /^(?!(?:mailto|sips?|xmpp|tel):)[^\s:/@]+:[^\s/@]+@[A-Za-z0-9][A-Za-z0-9.-]*(?::[0-9]{1,5})?(?:\/\S*)?$/i;
/** A whole value that is an HTTP Basic credential (the `Authorization` header's value without its name). */
const BASIC_CREDENTIAL = /^\s*Basic\s+[A-Za-z0-9+/]{8,}={0,2}\s*$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4}){4,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$|^[A-Za-z0-9_-]{16,}$/;

/** Whether a value holds a secret by its shape: see isWithheldFromSandbox; `depth` decodes percent-encoding and base64 once each. */
function holdsSecret(value: string, depth = 0): boolean {
  detectors ??= createMasker().masker;
  if (URL_USERINFO.test(value) || BARE_USERINFO.test(value.trim()) || BASIC_CREDENTIAL.test(value)) return true;
  if (detectors.maskText(value).found.length > 0) return true;
  if (depth >= 2) return false;
  for (const decoded of [percentDecoded(value), base64Decoded(value)])
    if (decoded !== undefined && decoded !== value && holdsSecret(decoded, depth + 1)) return true;
  return false;
}

function percentDecoded(value: string): string | undefined {
  if (!/%[0-9A-Fa-f]{2}/.test(value)) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** A value that is base64 of text (not of bytes: a hash or a random id decodes to none). */
function base64Decoded(value: string): string | undefined {
  const trimmed = value.trim();
  if (!BASE64.test(trimmed)) return undefined;
  const text = Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64').toString('utf8');
  // eslint-disable-next-line no-control-regex
  return /^[^\u0000-\u0008\u000e-\u001f\ufffd]+$/.test(text) ? text : undefined;
}

/**
 * Whether a variable of the environment a sandboxed server is started from (the CLI passes the
 * shell's on) is kept from it. By its name: every name `isSecretName` takes for a secret's
 * (containing token, key, secret, password, pwd, credential, auth, cookie or session:
 * `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `SSH_AUTH_SOCK`), but the shell's `PWD` and `OLDPWD` and git's `GIT_AUTHOR_NAME`, `_EMAIL`, `_DATE`;
 * the other agents and tickets (`GPG_AGENT_INFO`, `KRB5CCNAME`); `PASS`, `PW` and passphrases as words of a name (`SMTP_PASS`, not `BYPASS`); and the names of secrets that
 * name no secret (`SENTRY_DSN`, `CI_JOB_JWT`, `SLACK_WEBHOOK_URL`, `NETRC`, `…_CONNECTION_STRING`).
 * By its value, whatever its name: a URL with a user or a password anywhere in it (`DATABASE_URL=postgres://u:pw@h/db`,
 * `https://token@host`, `//user:pw@server/share`), `user:password@host` with no scheme, a Basic credential, and whatever the masking's detectors take for a secret (a JWT, a GitHub,
 * GitLab, Slack, Stripe, Google or AWS key, a Slack webhook, a private key, `AccountKey=…` in a
 * connection string); each also percent-decoded and base64-decoded. A server's entry that names one in its own `env` gets it.
 */
export function isWithheldFromSandbox(name: string, value?: string): boolean {
  const upper = name.toUpperCase();
  if (upper === 'PWD' || upper === 'OLDPWD' || /^GIT_AUTHOR_(?:NAME|EMAIL|DATE)$/.test(upper)) return false;
  if (isSecretName(name) || upper === 'GPG_AGENT_INFO' || upper === 'KRB5CCNAME' || SECRET_HOLDER_NAME.test(name)) return true;
  // The base every program needs (PATH, HOME, …) is paths and names, whatever a folder is called (`/opt/sk-…/bin`).
  if (!value || BASE_NAMES.has(upper) || upper.startsWith('LC_')) return false;
  return holdsSecret(value);
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
