import * as vscode from 'vscode';
import {
  auditedSandbox,
  describeReach,
  editorServerEnvironment,
  fromTemplate,
  hiddenPathsIn,
  previewReach,
  shortener,
  type AuditedServer,
  type HiddenPath,
  type SandboxBlocked,
  type SandboxReach,
  type ServerDefinition,
  type ShownText,
} from '../../core';
import { auditedServer } from '../../core/policy/serverRequests';
import type { ServerLogs } from '../logs/logs';
import type { HostUi } from '../ui/hostUi';
import { Commands } from '../common/ids';

/** The stderr lines of a server kept to look for the paths a failure names. */
const STDERR_KEPT = 30;
/** Paths named in one message at most; the log has every one. */
const PATHS_SHOWN = 3;
/** Notifications of hidden paths per server and window: a server that names path after path is heard in its log after these. */
const NOTICES_PER_SERVER = 3;

interface Launched {
  reach: SandboxReach;
  /** The roots the sandbox was made with: the boundary until the server restarts. */
  roots: string[];
}

/**
 * What the person sees of each server's sandbox: the reach it was started with (or would get, for
 * one not started), the paths it was denied, told with the setting that allows them, and the roots
 * that changed while it ran. The sandbox itself is made in `sandboxedParams` at launch.
 */
export class Sandboxes {
  private readonly launched = new Map<string, Launched>();
  private readonly stderr = new Map<string, string[]>();
  /** `server\0path` already told this session: a server that fails in a loop says it once. */
  private readonly told = new Set<string>();
  private readonly notices = new Map<string, number>();

  constructor(
    private readonly ui: HostUi,
    private readonly logs: ServerLogs,
    private readonly shown: (text: string) => ShownText,
    /** The file paths of a server's roots as they are now (the sandbox's boundary at its next start). */
    private readonly rootPaths: (def: ServerDefinition) => string[],
    private readonly cwdOf: (def: ServerDefinition) => string | undefined,
  ) {}

  /** A launch: `reach` when it runs sandboxed, undefined when it does not. */
  started(name: string, launched: Launched | undefined): void {
    this.stderr.delete(name);
    if (launched) this.launched.set(name, launched);
    else this.launched.delete(name);
  }

  /** A stderr line of the server, kept for the next failure. */
  stderrLine(name: string, line: string): void {
    if (!this.launched.has(name)) return;
    const lines = this.stderr.get(name) ?? [];
    lines.push(line);
    if (lines.length > STDERR_KEPT) lines.shift();
    this.stderr.set(name, lines);
  }

  /** The reach the running server was started with, else the one it would get if started now; undefined for a server that is not sandboxed. */
  reachOf(def: ServerDefinition, running: boolean): SandboxReach | undefined {
    if (def.type !== 'stdio' || !def.sandboxEnabled) return undefined;
    const launched = running ? this.launched.get(def.name) : undefined;
    if (launched) return launched.reach;
    try {
      // As written (no secret resolved): only the command, its PATH and the launcher's cache variables count.
      return previewReach(
        { command: def.command, args: def.args, cwd: this.cwdOf(def), env: def.env, baseEnv: editorServerEnvironment(process.env) },
        this.rootPaths(def),
        def.sandbox,
      );
    } catch {
      return undefined;
    }
  }

  /** "sandboxed: reads and writes ~/ws/, network: none", with what could not be honoured. */
  describe(reach: SandboxReach): string {
    return [describeReach(reach, shortener(reach.home)), ...reach.notes].join('; ');
  }

  /** A path as the person reads it: `~/` for the home. */
  short(reach: SandboxReach, p: string): string {
    return shortener(reach.home)(p);
  }

  /** The server as every audit record names it: with its sandbox's limits when it runs in one (as the CLI's records). */
  audited(def: ServerDefinition): AuditedServer {
    const launched = this.launched.get(def.name);
    return { ...auditedServer(def), ...(launched && { sandbox: auditedSandbox(launched.reach) }) };
  }

  /**
   * A sandboxed server failed (a request's error, an `isError` result, an exit, a failed start):
   * the paths its text and its last stderr lines name that the sandbox hid are told, each once, with
   * the setting that allows them. Only paths that exist and are really outside its reach count.
   */
  async failed(def: ServerDefinition, text: string | (() => string)): Promise<void> {
    const launched = this.launched.get(def.name);
    if (!launched) return;
    const all = [typeof text === 'string' ? text : text(), ...(this.stderr.get(def.name) ?? [])].join('\n');
    const fresh = hiddenPathsIn(all, launched.reach).filter((h) => {
      const key = `${def.name}\u0000${h.path}`;
      return !this.told.has(key) && this.told.add(key);
    });
    if (!fresh.length) return;
    for (const h of fresh) this.logs.channel(def.name).warn(`[sandbox] ${this.logLine(launched.reach, h)}`);
    await this.notice(def, this.message(def, launched.reach, fresh));
  }

  /**
   * The sandbox's proxy refused a connection (the host logs each one): told once per host and server,
   * with the setting that allows it, within the same few notifications per server as hidden paths.
   */
  async blocked(def: ServerDefinition, blocked: SandboxBlocked): Promise<void> {
    const key = `${def.name}\u0000host\u0000${blocked.host}`;
    if (this.told.has(key)) return;
    this.told.add(key);
    await this.notice(
      def,
      fromTemplate(
        vscode.l10n.t('The sandbox of the MCP server "{0}" refused a connection: {1}. Restart the server after changing its entry.'),
        this.shown(def.name),
        this.shown(blocked.message),
      ),
    );
  }

  /** A notification with Open Its Settings, while the server has notifications left in this window (its log has every one). */
  private async notice(def: ServerDefinition, message: ShownText): Promise<void> {
    const notices = this.notices.get(def.name) ?? 0;
    if (notices >= NOTICES_PER_SERVER) return;
    this.notices.set(def.name, notices + 1);
    const open = vscode.l10n.t('Open Its Settings');
    const pick = await this.ui.notify('warning', message, open);
    if (pick === open) await vscode.commands.executeCommand(Commands.editServerSettings, def.name);
  }

  private logLine(reach: SandboxReach, h: HiddenPath): string {
    return h.cause.kind === 'denyRead'
      ? `hid ${this.short(reach, h.path)}: sandbox.filesystem.denyRead has ${this.short(reach, h.cause.rule)}`
      : `hid ${this.short(reach, h.path)}: outside the roots and every other folder of its sandbox`;
  }

  private message(def: ServerDefinition, reach: SandboxReach, hidden: HiddenPath[]): ShownText {
    const shown = hidden.slice(0, PATHS_SHOWN);
    const paths = this.shown(shown.map((h) => this.short(reach, h.path)).join(', ') + (hidden.length > shown.length ? ', …' : ''));
    const denied = shown.find((h) => h.cause.kind === 'denyRead');
    if (denied?.cause.kind === 'denyRead')
      return fromTemplate(
        vscode.l10n.t(
          'The sandbox hid {0} from the MCP server "{1}": its entry\'s sandbox.filesystem.denyRead lists {2}. Remove it from there to let the server read it.',
        ),
        paths,
        this.shown(def.name),
        this.shown(this.short(reach, denied.cause.rule)),
      );
    const folders = this.shown([...new Set(shown.map((h) => this.short(reach, h.folder)))].join(', '));
    return fromTemplate(
      vscode.l10n.t(
        'The sandbox hid {0} from the MCP server "{1}": it lies outside the folders the server may reach. To let it read and write {2}, add that folder to "roots" of its entry (or to mcpHost.roots.extra, for every server), which also lets its tools be given paths there; to widen only its sandbox, add it to sandbox.filesystem.allowWrite of its entry (read and write too). Restart the server after.',
      ),
      paths,
      this.shown(def.name),
      folders,
    );
  }

  /**
   * The roots changed: a running sandbox cannot widen (nor narrow), so the servers whose boundary
   * is no longer their roots are named, with Restart.
   */
  async rootsChanged(running: readonly { definition: ServerDefinition; restart(): Promise<void> }[]): Promise<void> {
    const stale = running.filter((s) => {
      const launched = this.launched.get(s.definition.name);
      if (!launched) return false;
      const now = this.rootPaths(s.definition);
      return now.length !== launched.roots.length || now.some((r, i) => r !== launched.roots[i]);
    });
    if (!stale.length) return;
    for (const s of stale)
      this.logs.channel(s.definition.name).warn('[sandbox] the roots changed; the sandbox keeps the old ones until the server restarts');
    const restart = vscode.l10n.t('Restart');
    const pick = await this.ui.notify(
      'warning',
      fromTemplate(
        vscode.l10n.t('The roots changed, but the sandbox of {0} keeps the folders it started with until it restarts.'),
        this.shown(stale.map((s) => `"${s.definition.name}"`).join(', ')),
      ),
      restart,
    );
    if (pick !== restart) return;
    await Promise.all(
      stale.map((s) => s.restart().catch((e: unknown) => this.logs.channel(s.definition.name).warn(`could not restart: ${String(e)}`))),
    );
  }
}
