import type { CreateMessageParams } from '../protocol/types';
import type { SamplingPolicy } from '../servers/definition';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** A place in the budget, held from the check until the model has answered or the request was refused. */
export interface BudgetReservation {
  kind: 'reserved';
  /** The model was asked: the request counts from now, with the tokens it used (0 when unknown). */
  commit(tokens: number): void;
  /** Nothing reached a model (the person said no, no model): the place goes back. Does nothing after commit. */
  release(): void;
}

export interface BudgetRefusal {
  kind: 'over';
  reason: string;
}

interface Held {
  tokens: number;
}

/**
 * Rate and token budget per server, over rolling windows. A request takes its place with
 * {@link reserve}, synchronously, before anything is awaited: requests under way count against
 * the rate and hold their estimated tokens, so concurrent requests cannot all pass one check.
 * As before, a request may go while the hour's spending is below the budget, so the last one may
 * overshoot it by its own size; concurrent ones cannot each do so.
 */
export class SamplingBudget {
  private requests: number[] = [];
  private tokens: Array<{ at: number; count: number }> = [];
  private readonly held = new Set<Held>();

  constructor(private readonly now: () => number = Date.now) {}

  reserve(
    policy: Pick<SamplingPolicy, 'maxRequestsPerMinute' | 'maxTokensPerHour'>,
    estimatedTokens: number,
  ): BudgetReservation | BudgetRefusal {
    const t = this.now();
    this.requests = this.requests.filter((r) => t - r < MINUTE_MS);
    this.tokens = this.tokens.filter((r) => t - r.at < HOUR_MS);
    const underWay = this.held.size;
    const along = underWay ? ` (${underWay} under way)` : '';
    if (policy.maxRequestsPerMinute !== undefined && this.requests.length + underWay >= policy.maxRequestsPerMinute) {
      return { kind: 'over', reason: `rate limit: at most ${policy.maxRequestsPerMinute} sampling requests per minute${along}` };
    }
    const heldTokens = [...this.held].reduce((sum, h) => sum + h.tokens, 0);
    const used = this.usedTokens() + heldTokens;
    if (policy.maxTokensPerHour !== undefined && used >= policy.maxTokensPerHour) {
      const heldNote = heldTokens ? ` (${heldTokens} of them held by the ${underWay} under way)` : '';
      return { kind: 'over', reason: `token budget spent: ${used} of ${policy.maxTokensPerHour} tokens in the last hour${heldNote}` };
    }
    const place: Held = { tokens: Number.isFinite(estimatedTokens) ? Math.max(0, Math.ceil(estimatedTokens)) : 0 };
    this.held.add(place);
    return {
      kind: 'reserved',
      commit: (count) => {
        if (!this.held.delete(place)) return;
        const at = this.now();
        this.requests.push(at);
        this.tokens.push({ at, count });
      },
      release: () => {
        this.held.delete(place);
      },
    };
  }

  /** Tokens the model counted in the last hour, for requests that were answered. */
  private usedTokens(): number {
    return this.tokens.reduce((sum, r) => sum + r.count, 0);
  }
}

/**
 * What a request may cost before the model has counted it: its `maxTokens` (the answer is cut
 * there) and about a token per four characters of what it sends.
 */
export function estimatedSamplingTokens(request: CreateMessageParams): number {
  const sent = JSON.stringify(request.messages ?? []).length + (typeof request.systemPrompt === 'string' ? request.systemPrompt.length : 0);
  const answer = Number.isFinite(request.maxTokens) && request.maxTokens > 0 ? request.maxTokens : 0;
  return answer + Math.ceil(sent / 4);
}
