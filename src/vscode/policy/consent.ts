import * as vscode from 'vscode';
import type { ConsentAnswer } from '../common/answers';
import type { HostUi } from '../ui/hostUi';
import { changeStoredList } from '../common/storedList';
import {
  acceptedLaunch,
  forDisplay,
  fromTemplate,
  launchCovers,
  launchSummary,
  McpError,
  type AcceptedLaunch,
  type LaunchSummary,
  type PolicyGrant,
  type Redact,
  type ServerDefinition,
  type ShownText,
} from '../../core';
import { askModal, notify } from '../window/notifications';
import type { ScanFinding } from '../../core/scan/detectors';
import { findingLines } from './findingWords';

const STORE_KEY = 'mcpHost.allowedLaunches';
/** No person answers a modal this fast; it was dismissed without being shown. */
const MODAL_TOO_FAST_MS = 300;

/**
 * Workspace-defined servers run code from the repository a person opened (stdio) or receive
 * the person's secrets (HTTP headers), so the first start of each asks. The answer is keyed by
 * `launchHash` (command, args, env, envFile and cwd; or url and headers, as written), the envFile's
 * contents,
 * with the definition's `policyGrant` (what its settings let it do without asking): a later,
 * wider grant asks again, a narrower one does not. "always" is kept per workspace.
 */
export class LaunchConsent {
  private readonly allowedThisSession: AcceptedLaunch[] = [];

  constructor(
    private readonly workspaceState: vscode.Memento,
    private readonly isTrusted: () => boolean,
    private readonly ui: HostUi,
  ) {}

  needsConsent(def: ServerDefinition): boolean {
    return def.origin.scope !== 'user';
  }

  /**
   * `def` as written in settings (so no secret shows), `cwd` where it will really run, `sandbox` its
   * limits when it runs sandboxed, `envFile` the digest of its envFile's contents (an answer covers those contents only),
   * `findings` what MCP Host's scan found in it when it last ran.
   */
  async check(
    def: ServerDefinition,
    cwd: string | undefined,
    sandbox?: string,
    envFile?: string,
    findings: readonly ScanFinding[] = [],
  ): Promise<void> {
    if (!this.needsConsent(def)) return;
    if (!this.isTrusted())
      throw McpError.invalidRequest(vscode.l10n.t('{0}: workspace servers do not start in an untrusted workspace', def.name));
    const wanted = acceptedLaunch(def, envFile);
    const always = this.workspaceState.get<unknown[]>(STORE_KEY, []);
    if ([...always.flatMap(decodeStored), ...this.allowedThisSession].some((accepted) => launchCovers(accepted, wanted))) return;
    const answer = await this.ui.allowLaunch({
      ...launchSummary(def, cwd),
      ...(sandbox !== undefined && { sandbox }),
      ...(findings.length && { findings }),
    });
    if (answer === 'cancel') throw McpError.invalidRequest(vscode.l10n.t('{0}: starting was not allowed', def.name));
    this.allowedThisSession.push(wanted);
    if (answer === 'always') {
      // Read again when the change runs (another consent may have stored one meanwhile); the answers the new one covers are not needed any more.
      await changeStoredList<unknown>(this.workspaceState, STORE_KEY, (stored) => [
        ...stored.filter((entry) => !decodeStored(entry).some((old) => launchCovers(wanted, old))),
        encodeStored(wanted),
      ]);
    }
  }
}

/**
 * A stored answer: the launch hash alone (as before grants were shown, so those answers grant
 * nothing), or the hash with the grant the person saw.
 */
type StoredLaunch = string | { launch: string; grant: PolicyGrant };

function encodeStored(accepted: AcceptedLaunch): StoredLaunch {
  return accepted.grant ? { launch: accepted.launch, grant: accepted.grant } : accepted.launch;
}

function decodeStored(entry: unknown): AcceptedLaunch[] {
  if (typeof entry === 'string') return [{ launch: entry }];
  const e = entry as Partial<{ launch: unknown; grant: Partial<PolicyGrant> }> | null;
  if (typeof e?.launch !== 'string' || typeof e.grant !== 'object' || e.grant === null || !Array.isArray(e.grant.autoApprove)) return [];
  if (e.grant.roots !== undefined && !Array.isArray(e.grant.roots)) return [];
  return [{ launch: e.launch, grant: e.grant as PolicyGrant }];
}

/** The modal's text: what runs or where requests go, and which entries carry which secrets. */
export function consentDetail(launch: LaunchSummary): string {
  const parts: string[] = [];
  if (launch.commandLine !== undefined) {
    parts.push(
      vscode.l10n.t(
        'This workspace\'s settings define the MCP server "{0}". Starting it runs:\n\n{1}\n\nin {2}.',
        launch.def.name,
        launch.commandLine,
        launch.cwd ?? vscode.l10n.t('the first workspace folder'),
      ),
    );
  } else {
    parts.push(
      vscode.l10n.t(
        'This workspace\'s settings define the MCP server "{0}". Starting it sends requests to:\n\n{1}',
        launch.def.name,
        launch.url ?? '',
      ),
    );
  }
  const line = (e: LaunchSummary['entries'][number], sep: string) =>
    `${e.name}${sep}${e.shown}${e.sources.length ? `  (${vscode.l10n.t('secret from {0}', e.sources.join(', '))})` : e.secret ? `  (${vscode.l10n.t('secret, hidden')})` : ''}`;
  if (launch.entries.length) {
    const heading = launch.commandLine !== undefined ? vscode.l10n.t('Environment:') : vscode.l10n.t('Headers:');
    parts.push(`${heading}\n${launch.entries.map((e) => line(e, launch.commandLine !== undefined ? '=' : ': ')).join('\n')}`);
  }
  if (launch.envFile !== undefined) parts.push(vscode.l10n.t('Environment file: {0}', launch.envFile));
  if (launch.def.type === 'stdio' && launch.def.sandboxEnabled) {
    const def = launch.def;
    parts.push(
      launch.sandbox !== undefined
        ? `${launch.sandbox}\n${vscode.l10n.t('It also reads the system and its own installation; nothing else of your home.')}`
        : sandboxRules(def.sandbox?.network?.allowedDomains),
    );
  }
  if (launch.findings?.length)
    parts.push(
      `${vscode.l10n.t("When it last ran, MCP Host's scan flagged what this server offers (each stays offered to no AI model until you review and accept it):")}\n${findingLines(launch.findings, true).join('\n')}`,
    );
  if (launch.grant)
    parts.push(`${vscode.l10n.t("This server's settings also loosen your policy:")}\n${grantLines(launch.grant).join('\n')}`);
  parts.push(
    launch.commandLine !== undefined
      ? vscode.l10n.t('Only allow commands you trust.')
      : vscode.l10n.t('Only allow servers you trust with these values.'),
  );
  return parts.join('\n\n');
}

/**
 * A sandboxed server's limits as its settings put them, where no reach could be computed for this
 * machine: the launch consent's and the tooltip's sentence. `show` formats each allowed host.
 */
export function sandboxRules(allowedDomains: readonly string[] | undefined, show = (host: string) => host): string {
  return allowedDomains?.length
    ? vscode.l10n.t(
        "Sandboxed: it reads and writes only its roots, reads the system and its own installation, and connects only to {0}, through MCP Host's proxy.",
        allowedDomains.map((host) => show(host)).join(', '),
      )
    : vscode.l10n.t('Sandboxed: it reads and writes only its roots, reads the system and its own installation, and has no network.');
}

/** The grant as written, a setting a line, with what each lets the server do; values as JSON, so a name cannot break a line. */
function grantLines(grant: PolicyGrant): string[] {
  const lines: string[] = [];
  const sampling = grant.sampling;
  if (sampling) {
    const limits = (['maxTokensPerRequest', 'maxTokensPerHour', 'maxRequestsPerMinute'] as const).filter(
      (limit) => sampling[limit] !== undefined,
    );
    const says = limits.length
      ? vscode.l10n.t('it uses your language model without asking')
      : vscode.l10n.t('it uses your language model without asking, with no token or request limit');
    lines.push(`sampling.mode: "allow"  (${says})`);
    lines.push(`sampling.models: ${JSON.stringify(sampling.models)}${sampling.models.length ? '' : `  (${vscode.l10n.t('any model')})`}`);
    for (const limit of limits) lines.push(`sampling.${limit}: ${sampling[limit]}`);
  }
  if (grant.autoApprove.length)
    lines.push(`autoApprove: ${JSON.stringify(grant.autoApprove)}  (${vscode.l10n.t('these tools run without confirmation')})`);
  if (grant.trustAnnotations)
    lines.push(`trustAnnotations: true  (${vscode.l10n.t('the tools it calls read-only run without confirmation')})`);
  if (grant.shareWithChat)
    lines.push(`shareWithChat: true  (${vscode.l10n.t("VS Code's chat agent may call its tools, within this policy")})`);
  if (grant.tools?.allow) lines.push(`tools.allow: ${JSON.stringify(grant.tools.allow)}`);
  if (grant.tools?.deny) lines.push(`tools.deny: ${JSON.stringify(grant.tools.deny)}`);
  if (grant.roots)
    lines.push(`roots: ${JSON.stringify(grant.roots)}  (${vscode.l10n.t('its tools may be given paths in these folders without asking')})`);
  if (grant.sandbox?.off) lines.push(`sandboxEnabled: false  (${vscode.l10n.t('it runs outside the sandbox, with all your rights')})`);
  if (grant.sandbox?.allowWrite)
    lines.push(
      `sandbox.filesystem.allowWrite: ${JSON.stringify(grant.sandbox.allowWrite)}  (${vscode.l10n.t('its sandbox also lets it read and write these')})`,
    );
  if (grant.sandbox?.allowedDomains)
    lines.push(
      `sandbox.network.allowedDomains: ${JSON.stringify(grant.sandbox.allowedDomains)}  (${vscode.l10n.t("it may connect to these hosts through MCP Host's proxy")})`,
    );
  return lines;
}

/**
 * The launch consent as the modal shows it: shown whole (what runs must be read in full). The
 * values it shows are masked already; `redact` (the host's) hides a secret it knows that the
 * settings spell out elsewhere, such as another server's token copied into an argument.
 */
export function launchConsentText(launch: LaunchSummary, redact: Redact): { question: ShownText; detail: ShownText } {
  return {
    question: fromTemplate(vscode.l10n.t('Start the MCP server "{0}"?'), forDisplay(launch.def.name, redact)),
    detail: forDisplay(consentDetail(launch), redact, Number.POSITIVE_INFINITY),
  };
}

/** The default `HostUi.allowLaunch`. */
export async function askWithModal(launch: LaunchSummary, redact: Redact): Promise<ConsentAnswer> {
  const allow = vscode.l10n.t('Allow');
  const always = vscode.l10n.t('Always Allow in This Workspace');
  const { question, detail } = launchConsentText(launch, redact);
  const asked = Date.now();
  let pick = await askModal('warning', question, detail, allow, always);
  // A modal raised while the web workbench is still loading can come back dismissed at once,
  // before anyone saw it: ask again in a notification, which waits for the person.
  if (pick === undefined && Date.now() - asked < MODAL_TOO_FAST_MS) {
    pick = await notify(
      'warning',
      forDisplay(`${question} ${detail.replace(/\n+/g, ' ')}`, redact, Number.POSITIVE_INFINITY),
      allow,
      always,
    );
  }
  return pick === allow ? 'allow' : pick === always ? 'always' : 'cancel';
}
