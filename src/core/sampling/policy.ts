import type { ModelPreferences } from '../protocol/types';
import type { SamplingPolicy } from '../servers/definition';

export interface ModelCandidate {
  id: string;
  name: string;
  family: string;
  vendor: string;
  maxInputTokens: number;
}

export type ModelChoice<M extends ModelCandidate> =
  { kind: 'chosen'; model: M } | { kind: 'ambiguous'; models: M[] } | { kind: 'none'; reason: string };

const SMALL = /mini|flash|haiku|small|lite|fast|nano/i;

/** The models the server's allowlist admits (ids or families, any case); all when the list is empty. */
export function allowedModels<M extends ModelCandidate>(models: M[], policy: SamplingPolicy): M[] {
  if (!policy.models.length) return models;
  const allow = policy.models.map((m) => m.toLowerCase());
  return models.filter((m) => allow.includes(m.id.toLowerCase()) || allow.includes(m.family.toLowerCase()));
}

/**
 * Picks a model as the spec advises: hints are matched as name substrings in order (the first
 * hint that matches wins); the priorities break ties, with the context size standing in for
 * intelligence and "small" model names for speed and cost, since the editor tells neither.
 */
export function chooseModel<M extends ModelCandidate>(
  models: M[],
  policy: SamplingPolicy,
  prefs: ModelPreferences | undefined,
): ModelChoice<M> {
  const allowed = allowedModels(models, policy);
  if (!allowed.length) {
    return {
      kind: 'none',
      reason: models.length
        ? `none of the available models (${models.map((m) => m.id).join(', ')}) is in this server's allowlist`
        : 'no language model is available',
    };
  }
  let pool = allowed;
  for (const hint of prefs?.hints ?? []) {
    const needle = hint.name?.toLowerCase();
    if (!needle) continue;
    const hits = allowed.filter((m) => [m.id, m.name, m.family].some((s) => s.toLowerCase().includes(needle)));
    if (hits.length) {
      pool = hits;
      break;
    }
  }
  if (pool.length === 1) return { kind: 'chosen', model: pool[0] };
  const intelligence = prefs?.intelligencePriority ?? 0;
  const quick = ((prefs?.speedPriority ?? 0) + (prefs?.costPriority ?? 0)) / 2;
  const largest = Math.max(...pool.map((m) => m.maxInputTokens), 1);
  const score = (m: M) => intelligence * (m.maxInputTokens / largest) + quick * (SMALL.test(`${m.id} ${m.name}`) ? 1 : 0);
  const best = Math.max(...pool.map(score));
  const top = pool.filter((m) => Math.abs(score(m) - best) < 1e-9);
  return top.length === 1 ? { kind: 'chosen', model: top[0] } : { kind: 'ambiguous', models: top };
}

/** Cuts streamed text at the first stop sequence. */
export function applyStopSequences(text: string, stops: string[] | undefined): { text: string; stopped: boolean } {
  let cut = -1;
  for (const s of stops ?? []) {
    if (!s) continue;
    const i = text.indexOf(s);
    if (i !== -1 && (cut === -1 || i < cut)) cut = i;
  }
  return cut === -1 ? { text, stopped: false } : { text: text.slice(0, cut), stopped: true };
}
