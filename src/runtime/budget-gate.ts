import type { ApprovalQueue, ApprovalRequest } from '../authz/approvals';
import { USER_ID } from '../collective/participant';
import { budgetInput, budgetText, reachedBudget, type BudgetName, type BudgetSettings } from '../context/budget';
import type { UsageTotals } from '../providers/usage-totals';
import { messageOf } from '../errors';
import type { Journal } from './journal';
import type { HeadlessMode } from './env';
import type { Turn } from './turn';

export interface BudgetGateDeps {
  readonly settings: BudgetSettings;
  /** Totals of the run and its sessions (the usage book). */
  usage(): { readonly run: UsageTotals; readonly sessions: Readonly<Record<string, UsageTotals>> };
  readonly approvals: ApprovalQueue;
  route(asker: Turn | undefined, request: ApprovalRequest): void;
  readonly headless?: HeadlessMode;
  readonly notice: Journal['notice'];
}

/** `null`: go on; a text: the turn ends with it (a budget was reached and not raised). */
export type BudgetGate = (turn: Turn) => Promise<string | null>;

const tokensOf = (t: UsageTotals | undefined): number => (t ? t.inputTokens + t.outputTokens + t.cacheReadTokens + t.cacheWriteTokens : 0);

/**
 * Before each provider call (docs/context.md, "Budgets"): when a budget is reached, the call
 * waits on an approval request with `toolName: "budget"` in the ordinary queue, for the user.
 * Approved: the limit rises by `raiseBy` × its configured value (for the run, the session or
 * the turn). Rejected: the turn ends. Headless, the request is rejected at once and the turn
 * ends (`legion run` exits 5). Calls of models without a price count tokens only: a dollar
 * budget cannot see them, and a notice says so once per session.
 */
export function createBudgetGate(deps: BudgetGateDeps): BudgetGate {
  const { settings } = deps;
  const active = settings.runUsd !== undefined || settings.sessionUsd !== undefined || settings.turnTokens !== undefined;
  let runRaises = 0;
  const sessionRaises = new Map<string, number>();
  const turnStart = new WeakMap<Turn, number>();
  const turnRaises = new WeakMap<Turn, number>();
  const warned = new Set<string>();
  let ids = 0;

  return async (turn) => {
    if (!active) return null;
    const sessionId = turn.session.id;
    for (;;) {
      const usage = deps.usage();
      const session = usage.sessions[sessionId];
      if (!turnStart.has(turn)) turnStart.set(turn, tokensOf(session));
      const usdBudget = settings.runUsd !== undefined || settings.sessionUsd !== undefined;
      if (usdBudget && usage.run.partial && !warned.has(sessionId)) {
        warned.add(sessionId);
        deps.notice('warn', `budgets: calls to ${usage.run.unpricedModels.join(', ') || 'some models'} have no known price: dollar budgets do not count them (they count tokens, which only budgets.turnTokens limits)`, sessionId);
      }
      const raises: Record<BudgetName, number> = { runUsd: runRaises, sessionUsd: sessionRaises.get(sessionId) ?? 0, turnTokens: turnRaises.get(turn) ?? 0 };
      const reached = reachedBudget(settings, {
        runUsd: usage.run.costUsd, sessionUsd: session?.costUsd ?? (usage.run.costUsd === null ? null : 0), turnTokens: tokensOf(session) - turnStart.get(turn)!,
      }, raises);
      if (!reached) return null;
      const text = budgetText(reached);
      let request: ApprovalRequest;
      try {
        [request] = deps.approvals.raise([{
          sessionId, participantId: turn.agent.id, chain: [...turn.chain], toolUseId: `budget-${Date.now().toString(36)}-${++ids}`,
          toolName: 'budget', input: budgetInput(reached), ruleId: null, reason: text, approverId: USER_ID,
        }]) as [ApprovalRequest];
      } catch (error) {
        return `${text} (could not record the request: ${messageOf(error)})`;
      }
      if (deps.headless) {
        deps.approvals.resolve([request.requestId], 'rejected', { decidedBy: 'headless', reason: 'budget reached in a headless run' });
        return text;
      }
      deps.route(turn, request);
      const outcome = await deps.approvals.wait(request.requestId, turn.controller.signal);
      if (outcome.decision !== 'approved') return turn.controller.signal.aborted ? null : `${text.split(';')[0]}: rejected`;
      if (reached.budget === 'runUsd') runRaises++;
      else if (reached.budget === 'sessionUsd') sessionRaises.set(sessionId, raises.sessionUsd + 1);
      else turnRaises.set(turn, raises.turnTokens + 1);
    }
  };
}
