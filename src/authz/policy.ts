import micromatch from 'micromatch';
import { USER_ID, type ToolAuthorization } from '../collective/participant';
import type { Decision, Verdict } from './types';
import type { RuleOutcome } from './rules/evaluate';

/**
 * Participant policies (docs/design.md#authorization, step 3): `toolAuthorizations` maps tool-name globs to
 * `auto | requires_approval | deny`. When several globs match a tool, the strictest wins
 * (deny > requires_approval > auto), whatever their order or specificity.
 */
export interface PolicyHit {
  readonly level: ToolAuthorization;
  /** The glob that decided. */
  readonly glob: string;
}

const RANK: Record<ToolAuthorization, number> = { auto: 0, requires_approval: 1, deny: 2 };

export function policyFor(toolAuthorizations: Readonly<Record<string, ToolAuthorization>> | undefined, toolName: string): PolicyHit | null {
  let best: PolicyHit | null = null;
  for (const [glob, level] of Object.entries(toolAuthorizations ?? {})) {
    if (!(glob === toolName || micromatch.isMatch(toolName, glob, { dot: true }))) continue;
    if (!best || RANK[level] > RANK[best.level]) best = { level, glob };
  }
  return best;
}

/**
 * Whether only a person may answer this ask: a shell line that is not plain words
 * (docs/shell-rules.md#plain-words), or an ask whose rule names the user as its approver
 * (`approver: user`, as the shipped `git-internals-ask` does). Neither a PreToolUse hook's allow
 * (conventions/hooks/engine.ts), nor LLM triage (runtime/approval-phase.ts), nor an agent approver
 * (authz/approver.ts) answers it: a model reading what an agent wrote is not the person asked for.
 */
export function personOnly(verdict: Pick<Verdict, 'notPlain' | 'approver'>): boolean {
  return verdict.notPlain !== undefined || verdict.approver === USER_ID;
}

/**
 * Combine the rules' outcome with a policy and the unmatched default:
 *   - a rule's deny stands; a policy can only make a rule's ask or allow stricter;
 *   - where no rule matched, the policy decides (auto → allow, requires_approval → ask);
 *   - where neither speaks, a fallback rule (`rules.fallback`) decides, else `unmatched`;
 *   - a shell command that is not plain words (`rules.notPlain`) asks where this would allow.
 */
export function applyPolicy(rules: RuleOutcome, policy: PolicyHit | null, unmatched: Decision): Verdict {
  const verdict = combine(rules, policy, unmatched);
  if (!rules.notPlain) return verdict;
  // A shell command that is not plain words is never allowed without a person (docs/shell-rules.md):
  // its ask says so (`notPlain`), so that nothing later (a PreToolUse hook's allow) answers it either.
  if (verdict.decision === 'allow') return { ...verdict, decision: 'ask', reason: `${verdict.reason}; but ${rules.notPlain}`, notPlain: rules.notPlain };
  return verdict.decision === 'ask' ? { ...verdict, notPlain: rules.notPlain } : verdict;
}

function combine(rules: RuleOutcome, policy: PolicyHit | null, unmatched: Decision): Verdict {
  const fromRule = (decision: Decision): Verdict => ({
    decision,
    ruleId: rules.ruleId,
    reason: rules.reason,
    source: 'rule',
    ...(rules.approver && decision === 'ask' ? { approver: rules.approver } : {}),
  });
  const fromPolicy = (decision: Decision, p: PolicyHit): Verdict => ({
    decision,
    ruleId: null,
    reason: `policy "${p.glob}: ${p.level}"${rules.decision ? ` (rules said ${rules.decision}: ${rules.reason})` : ''}`,
    source: 'policy',
  });
  if (rules.decision === 'deny') return fromRule('deny');
  if (rules.decision !== null) {
    if (!policy || policy.level === 'auto') return fromRule(rules.decision);
    if (policy.level === 'deny') return fromPolicy('deny', policy);
    return rules.decision === 'allow' ? fromPolicy('ask', policy) : fromRule('ask');
  }
  if (policy) return fromPolicy(policy.level === 'auto' ? 'allow' : policy.level === 'deny' ? 'deny' : 'ask', policy);
  const fallback = rules.fallback;
  if (fallback?.decision) {
    // A shell command's parts: name the one no rule allowed (`no rule allows \`npm test\``).
    const reason = rules.reason === 'no rule matches' ? fallback.reason : `${fallback.reason} (${rules.reason})`;
    return { decision: fallback.decision, ruleId: fallback.ruleId, reason, source: 'rule', fallback: true, ...(fallback.approver && fallback.decision === 'ask' ? { approver: fallback.approver } : {}) };
  }
  return { decision: unmatched, ruleId: null, reason: `${rules.reason} and no policy applies: defaults.unmatched is ${unmatched}`, source: 'default' };
}
