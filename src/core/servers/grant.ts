import { createHash } from 'node:crypto';
import { launchHash, type SamplingPolicy, type ServerDefinition } from './definition';

type SamplingLimits = Omit<SamplingPolicy, 'mode'>;

/**
 * What a definition's own settings let its server do without asking the person, beyond what a
 * workspace or folder server gets by default (every sampling request and every tool asks). A
 * repository could write any of it, so the launch consent shows it and an answer covers only the
 * grant it showed (`launchCovers`).
 */
export interface PolicyGrant {
  /** `sampling.mode: "allow"`: requests reach the model without a question, within these limits as written. */
  sampling?: SamplingLimits;
  /** `autoApprove`: tools that run without confirmation. */
  autoApprove: string[];
  /** `trustAnnotations: true`: a tool the server calls read-only runs without confirmation. */
  trustAnnotations: boolean;
  /** `shareWithChat: true`: VS Code's chat agent may call its tools (through the gate); absent when not shared. */
  shareWithChat?: true;
  /** `tools.allow` and `tools.deny`: which tools `autoApprove` and `trustAnnotations` can reach; kept only when one of them is granted. */
  tools?: { allow?: string[]; deny?: string[] };
  /**
   * `roots`: folders the definition adds to the roots its server is answered and fenced by. A
   * workspace could otherwise widen its own server's fence to `/` or the home folder.
   */
  roots?: string[];
  /**
   * A sandboxed server's `sandbox` settings that widen its sandbox beyond the roots: a workspace
   * could otherwise let its own server write the home folder. (No network is ever granted yet.)
   */
  sandbox?: { off?: true; allowWrite?: string[]; allowedDomains?: string[] };
}

/** A launch the person allowed: its `launchHash`, and the grant the consent showed (none for an answer given before grants were shown). */
export interface AcceptedLaunch {
  launch: string;
  grant?: PolicyGrant;
}

/**
 * What the launch consent asks the person to accept for `def`: with an envFile, its contents too
 * (`envFileDigest` of ./launch.ts), so that an answer does not cover a file rewritten since.
 */
export function acceptedLaunch(def: ServerDefinition, envFile?: string): AcceptedLaunch {
  const launch =
    envFile === undefined
      ? launchHash(def)
      : createHash('sha256')
          .update(`${launchHash(def)}\u0000${envFile}`)
          .digest('hex')
          .slice(0, 16);
  return { launch, grant: policyGrant(def) };
}

const set = (xs: string[] | undefined): string[] | undefined => (xs?.length ? [...new Set(xs)].sort() : undefined);

/**
 * The loosening part of a definition, as written, or undefined when it loosens nothing. Tightening
 * settings (`sampling.mode` "ask" or "deny", `tools.deny`, a model list or budgets outside "allow")
 * are not part of it: they need nobody's consent.
 */
export function policyGrant(def: ServerDefinition): PolicyGrant | undefined {
  const { mode: _mode, ...limits } = def.sampling;
  const sampling = def.sampling.mode === 'allow' ? { ...limits, models: set(limits.models) ?? [] } : undefined;
  const autoApprove = set(def.autoApprove) ?? [];
  const trustAnnotations = def.trustAnnotations && def.origin.scope !== 'user';
  // The person's own servers' roots are the person's; a workspace's widen the fence, so they are shown.
  const roots = def.origin.scope === 'user' ? undefined : set(def.roots);
  const shareWithChat = def.shareWithChat && def.origin.scope !== 'user';
  const sandbox = def.origin.scope === 'user' ? undefined : sandboxWidening(def);
  if (!sampling && !autoApprove.length && !trustAnnotations && !shareWithChat && !roots && !sandbox) return undefined;
  const reach = autoApprove.length || trustAnnotations ? { allow: set(def.tools.allow), deny: set(def.tools.deny) } : undefined;
  return {
    ...(sampling ? { sampling } : {}),
    autoApprove,
    trustAnnotations,
    ...(shareWithChat ? { shareWithChat: true as const } : {}),
    ...(reach && (reach.allow || reach.deny) ? { tools: reach } : {}),
    ...(roots ? { roots } : {}),
    ...(sandbox ? { sandbox } : {}),
  };
}

/** A sandbox turned off against the person's default, or what a sandboxed definition's `sandbox` adds to its reach (narrowing lists need no consent). */
function sandboxWidening(def: ServerDefinition): PolicyGrant['sandbox'] {
  if (def.type !== 'stdio') return undefined;
  if (def.sandboxEnabled === false && def.sandboxByDefault) return { off: true };
  if (!def.sandboxEnabled) return undefined;
  const allowWrite = set(def.sandbox?.filesystem?.allowWrite);
  const allowedDomains = set(def.sandbox?.network?.allowedDomains);
  if (!allowWrite && !allowedDomains) return undefined;
  return { ...(allowWrite ? { allowWrite } : {}), ...(allowedDomains ? { allowedDomains } : {}) };
}

/** Whether the person's answer for `accepted` also answers for `wanted`: the same launch, and a grant no wider. */
export function launchCovers(accepted: AcceptedLaunch, wanted: AcceptedLaunch): boolean {
  return accepted.launch === wanted.launch && grantCovers(accepted.grant, wanted.grant);
}

function grantCovers(accepted: PolicyGrant | undefined, wanted: PolicyGrant | undefined): boolean {
  if (!wanted) return true;
  if (!accepted) return false;
  const accepts = new Set(accepted.autoApprove);
  const skipsToolQuestions = wanted.autoApprove.length > 0 || wanted.trustAnnotations;
  return (
    samplingCovers(accepted.sampling, wanted.sampling) &&
    wanted.autoApprove.every((t) => accepts.has(t)) &&
    (!wanted.trustAnnotations || accepted.trustAnnotations) &&
    (!wanted.shareWithChat || accepted.shareWithChat === true) &&
    (!skipsToolQuestions || reachCovers(accepted.tools, wanted.tools)) &&
    (wanted.roots ?? []).every((r) => accepted.roots?.includes(r)) &&
    (!wanted.sandbox?.off || accepted.sandbox?.off === true) &&
    (wanted.sandbox?.allowWrite ?? []).every((p) => accepted.sandbox?.allowWrite?.includes(p)) &&
    (wanted.sandbox?.allowedDomains ?? []).every((d) => accepted.sandbox?.allowedDomains?.includes(d))
  );
}

function samplingCovers(accepted: SamplingLimits | undefined, wanted: SamplingLimits | undefined): boolean {
  if (!wanted) return true;
  if (!accepted) return false;
  // Model ids and families are matched in any case (allowedModels); an empty list means any model.
  const models = new Set(accepted.models.map((m) => m.toLowerCase()));
  const modelsCovered = !models.size || (wanted.models.length > 0 && wanted.models.every((m) => models.has(m.toLowerCase())));
  const within = (limit: keyof Omit<SamplingLimits, 'models'>) =>
    accepted[limit] === undefined || (wanted[limit] !== undefined && wanted[limit] <= accepted[limit]);
  return modelsCovered && within('maxTokensPerRequest') && within('maxTokensPerHour') && within('maxRequestsPerMinute');
}

/**
 * Whether the tools `wanted` can reach are among those `accepted` could: fewer allow patterns and
 * more deny patterns only narrow. Patterns are compared as written, not as globs, so a rewritten
 * but equal list asks again; that costs a question, never a grant.
 */
function reachCovers(accepted: PolicyGrant['tools'], wanted: PolicyGrant['tools']): boolean {
  const allowCovered = !accepted?.allow || (!!wanted?.allow && wanted.allow.every((p) => accepted.allow!.includes(p)));
  const denyCovered = (accepted?.deny ?? []).every((p) => wanted?.deny?.includes(p));
  return allowCovered && denyCovered;
}
