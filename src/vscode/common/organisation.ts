/**
 * The values of MCP Host's lockable settings as the organisation leaves them to the person: the
 * organisation's value where it locks one, else the person's own (user or machine settings only:
 * a workspace never sets them). Two ways to lock (../../core/gateway/managedPolicy.ts): VS Code's
 * policy for the setting (it shows as managed in the Settings editor, and VS Code hands extensions
 * its value), and MCP Host's managed policy file, read once per window, which holds where VS Code
 * does not apply policies to extensions (the browser's VS Code, a remote server, VS Code before it
 * reads them).
 */
import { unwatchFile, watchFile, type Stats } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import * as vscode from 'vscode';
import {
  LOCKABLE_SETTINGS,
  managedPolicyFile,
  readManagedPolicy,
  type LockableSetting,
  type ManagedPolicy,
} from '../../core/gateway/managedPolicy';

/** The defaults package.json gives the lockable settings (test/core/organisation.test.ts holds them to it). */
export const LOCKABLE_DEFAULTS: Record<LockableSetting, unknown> = {
  'mcpHost.sandbox.default': undefined,
  'mcpHost.roots.fence': undefined,
  'mcpHost.pins.acceptChanges': true,
  'mcpHost.flowGuard': { chat: 'ask', agents: 'ask' },
  'mcpHost.audit.file': '',
  'mcpHost.telemetry.endpoint': '',
  'mcpHost.telemetry.protocol': 'http/protobuf',
  'mcpHost.telemetry.exportContent': false,
  'mcpHost.organisation.vscodeMcpPolicy': 'allServers',
};

/** Who set the value in force: the organisation (through VS Code's policy or the managed file), or the person. */
export type LockSource = 'policy' | 'managedFile' | undefined;

export interface LockedValue<T> {
  value: T | undefined;
  /** Set when the organisation locked it: the person's own value does not count. */
  lockedBy: LockSource;
}

let managed: ManagedPolicy | undefined;
/** The managed file, read once per window and again after it or MCP Host's or VS Code's MCP settings change. */
export function managedPolicy(): ManagedPolicy {
  return (managed ??= readManagedPolicy());
}

/** How often the managed file is looked at (a `stat`): it may be created, replaced or removed, its folder too. */
const MANAGED_FILE_POLL_MS = 2000;

/** Made on first use, not when the module loads: nothing of the editor's API runs before `activate`. */
let emitter: vscode.EventEmitter<void> | undefined;
const policyChanged = (): vscode.EventEmitter<void> => (emitter ??= new vscode.EventEmitter<void>());
/**
 * Fires after the organisation's policy may have changed: the managed file changed, or VS Code's
 * MCP settings or MCP Host's organisation setting did (a policy VS Code applies comes as a
 * configuration change). The managed file is read again by then.
 */
export const onDidChangeOrganisationPolicy: vscode.Event<void> = (listener, thisArgs, disposables) =>
  policyChanged().event(listener, thisArgs, disposables);

/**
 * Reads the managed file again whenever it changes, and whenever MCP Host's settings (or VS Code's
 * MCP ones) change, so a value a person sets is checked against the organisation's as it is now.
 * Registered in `activate` right after the setting caches (../common/settingCache.ts), before any
 * reader runs.
 */
export function watchManagedPolicy(file: string = managedPolicyFile()): vscode.Disposable {
  const fileChanged = (now: Stats, before: Stats): void => {
    if (now.mtimeMs === before.mtimeMs && now.size === before.size && now.ino === before.ino) return;
    managed = undefined;
    policyChanged().fire();
  };
  watchFile(file, { interval: MANAGED_FILE_POLL_MS, persistent: false }, fileChanged);
  const settings = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('mcpHost') || e.affectsConfiguration('chat.mcp')) managed = undefined;
    if (e.affectsConfiguration('chat.mcp') || e.affectsConfiguration('mcpHost.organisation')) policyChanged().fire();
  });
  return new vscode.Disposable(() => {
    unwatchFile(file, fileChanged);
    settings.dispose();
  });
}

function split(setting: LockableSetting): [string, string] {
  const dot = setting.indexOf('.');
  return [setting.slice(0, dot), setting.slice(dot + 1)];
}

/**
 * VS Code's policy value of `setting`, if it has one. VS Code gives extensions no field for it: a
 * policy's value is what `get` returns over everything, and what `inspect` gives as the default.
 * So a `get` that differs from the person's value (or the default of package.json) is the policy.
 * These settings are machine-scoped, so no workspace value can be what differs.
 */
function vscodePolicyValue(setting: LockableSetting): { value: unknown } | undefined {
  const [section, key] = split(setting);
  const config = vscode.workspace.getConfiguration(section);
  const inspected = config.inspect(key);
  if (!inspected) return undefined;
  const got = config.get(key);
  const person = mergedOverDefault(inspected.globalValue, LOCKABLE_DEFAULTS[setting]);
  if (isDeepStrictEqual(got, person)) return undefined;
  // A value that is the workspace's is not a policy (a VS Code that applied one despite the scope).
  if (inspected.workspaceValue !== undefined && isDeepStrictEqual(got, inspected.workspaceValue)) return undefined;
  if (inspected.workspaceFolderValue !== undefined && isDeepStrictEqual(got, inspected.workspaceFolderValue)) return undefined;
  return { value: got };
}

/** What `get` returns for the person's value: VS Code merges an object setting's value over its default, member by member. */
function mergedOverDefault(own: unknown, fallback: unknown): unknown {
  if (own === undefined) return fallback;
  const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  return isRecord(own) && isRecord(fallback) ? { ...fallback, ...own } : own;
}

/**
 * The value in force of a lockable setting: the organisation's, else the person's user (or machine)
 * value, else undefined. `decode` reads a value as written (an object setting's policy may come as
 * its JSON text) before `valid` checks it.
 */
export function lockedSetting<T>(
  setting: LockableSetting,
  valid: (value: unknown) => value is T,
  decode: (value: unknown) => unknown = (v) => v,
): LockedValue<T> {
  const policy = vscodePolicyValue(setting);
  const fromPolicy = policy && decode(policy.value);
  if (policy && valid(fromPolicy)) return { value: fromPolicy, lockedBy: 'policy' };
  const raw = managedPolicy().values[LOCKABLE_SETTINGS[setting]];
  const file = raw === undefined ? undefined : decode(raw);
  if (file !== undefined && valid(file)) return { value: file, lockedBy: 'managedFile' };
  const [section, key] = split(setting);
  const inspected = vscode.workspace.getConfiguration(section).inspect(key)?.globalValue;
  const own = inspected === undefined ? undefined : decode(inspected);
  return { value: valid(own) ? own : undefined, lockedBy: undefined };
}

export const isString = (v: unknown): v is string => typeof v === 'string';
export const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
/** A guard for one of `values`. */
export function oneOf<T extends string>(values: readonly T[]): (v: unknown) => v is T {
  return (v: unknown): v is T => typeof v === 'string' && (values as readonly string[]).includes(v);
}
