/**
 * Spending limits (docs/context.md, "Budgets"): `budgets.runUsd`, `budgets.sessionUsd`,
 * `budgets.turnTokens`, all off unless set. Pure: the runtime's gate (budget-gate.ts) passes
 * what was spent and how often each limit was raised.
 */
export type BudgetName = 'runUsd' | 'sessionUsd' | 'turnTokens';

export interface BudgetSettings {
  readonly runUsd?: number;
  readonly sessionUsd?: number;
  readonly turnTokens?: number;
  /** Approving a reached budget raises its limit by this many times its configured value. */
  readonly raiseBy: number;
}

/** What was spent so far; a dollar figure is null when no call had a known price. */
export interface Spent {
  readonly runUsd: number | null;
  readonly sessionUsd: number | null;
  readonly turnTokens: number;
}

export interface Reached {
  readonly budget: BudgetName;
  readonly spent: number;
  readonly limit: number;
  /** What approving adds to the limit. */
  readonly raiseBy: number;
}

/** The current limit of a budget raised `raises` times. */
export function limitOf(configured: number, raiseBy: number, raises: number): number {
  return configured * (1 + raiseBy * raises);
}

/** The first budget reached (run, then session, then turn), or null. Unknown dollar figures reach nothing. */
export function reachedBudget(settings: BudgetSettings, spent: Spent, raises: Readonly<Record<BudgetName, number>>): Reached | null {
  const names: BudgetName[] = ['runUsd', 'sessionUsd', 'turnTokens'];
  for (const budget of names) {
    const configured = settings[budget];
    const value = spent[budget];
    if (configured === undefined || value === null) continue;
    const limit = limitOf(configured, settings.raiseBy, raises[budget]);
    if (value >= limit) return { budget, spent: value, limit, raiseBy: configured * settings.raiseBy };
  }
  return null;
}

/** The approval request's input (`toolName: "budget"`): `{ budget, spentUsd | tokens, limit, raiseBy }`. */
export function budgetInput(reached: Reached): Record<string, unknown> {
  const round = (n: number): number => Math.round(n * 10_000) / 10_000;
  return reached.budget === 'turnTokens'
    ? { budget: reached.budget, tokens: reached.spent, limit: reached.limit, raiseBy: reached.raiseBy }
    : { budget: reached.budget, spentUsd: round(reached.spent), limit: round(reached.limit), raiseBy: round(reached.raiseBy) };
}

/** One line for the queue, the notice and the turn's error. */
export function budgetText(reached: Reached): string {
  const money = (n: number): string => `$${n.toFixed(n < 1 ? 4 : 2)}`;
  const [spent, limit, raise] = reached.budget === 'turnTokens'
    ? [`${reached.spent} tokens`, `${reached.limit} tokens`, `${reached.raiseBy} tokens`]
    : [money(reached.spent), money(reached.limit), money(reached.raiseBy)];
  return `budget reached: budgets.${reached.budget} (${spent} of ${limit}); approve to raise it by ${raise}, reject to end the turn`;
}
