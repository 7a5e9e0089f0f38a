/**
 * Token and cost totals per session and per run, fed with `usage` events (docs/design.md#events).
 * Cost is null-aware: `costUsd` sums the calls whose price is known (null when none is),
 * and `partial` says some call had no price, so the UI shows "≥ $0.12" or "cost unknown"
 * instead of a wrong figure.
 */
export interface UsageRecord {
  readonly sessionId: string;
  readonly model: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly costUsd: number | null;
}

export interface UsageTotals {
  readonly calls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  /** Sum of the known costs; null when no call had a known price. */
  readonly costUsd: number | null;
  /** True when at least one call had no price (the cost is a lower bound). */
  readonly partial: boolean;
  /** Models without a price, for a hint ("no price for llama3.1"). */
  readonly unpricedModels: readonly string[];
}

export const EMPTY_TOTALS: UsageTotals = {
  calls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd: null,
  partial: false,
  unpricedModels: [],
};

export function addUsage(totals: UsageTotals, u: Omit<UsageRecord, 'sessionId'>): UsageTotals {
  const unpriced = u.costUsd === null && !totals.unpricedModels.includes(u.model) ? [...totals.unpricedModels, u.model] : totals.unpricedModels;
  return {
    calls: totals.calls + 1,
    inputTokens: totals.inputTokens + u.inputTokens,
    outputTokens: totals.outputTokens + u.outputTokens,
    cacheReadTokens: totals.cacheReadTokens + u.cacheReadTokens,
    cacheWriteTokens: totals.cacheWriteTokens + u.cacheWriteTokens,
    costUsd: u.costUsd === null ? totals.costUsd : (totals.costUsd ?? 0) + u.costUsd,
    partial: totals.partial || u.costUsd === null,
    unpricedModels: unpriced,
  };
}

export interface UsageAccumulator {
  /** Feed one `usage` event (extra fields such as `type`, `seq` or `participantId` are ignored). */
  add(record: UsageRecord): void;
  session(sessionId: string): UsageTotals;
  run(): UsageTotals;
  /** Totals of every session that reported usage, in first-seen order. */
  sessions(): ReadonlyMap<string, UsageTotals>;
}

/** `seed`: totals to continue from (a resumed run's, read back from disk). */
export function createUsageAccumulator(seed?: { run: UsageTotals; sessions: Readonly<Record<string, UsageTotals>> }): UsageAccumulator {
  const perSession = new Map<string, UsageTotals>(Object.entries(seed?.sessions ?? {}));
  let run = seed?.run ?? EMPTY_TOTALS;
  return {
    add(record) {
      perSession.set(record.sessionId, addUsage(perSession.get(record.sessionId) ?? EMPTY_TOTALS, record));
      run = addUsage(run, record);
    },
    session: (id) => perSession.get(id) ?? EMPTY_TOTALS,
    run: () => run,
    sessions: () => perSession,
  };
}

/** "$0.0123", "≥ $0.0123" (partial), "cost unknown" (nothing priced), "$0" (no calls). */
export function formatCost(totals: UsageTotals): string {
  if (totals.costUsd === null) return totals.calls === 0 ? '$0' : 'cost unknown';
  return `${totals.partial ? '≥ ' : ''}${formatUsd(totals.costUsd)}`;
}

export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  if (usd < 100) return `$${usd.toFixed(2)}`;
  return `$${Math.round(usd)}`;
}

/** "12.3k" style token counts. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}
