import type { LegionCore, PendingApproval } from '../../src/runtime/core-api';
import { keyArgumentOf, mergeConflictOf } from '../../src/runtime/core-api';

/**
 * The approval queue's data: which requests it shows, in what order, and how a decision is
 * applied. Contract: a decision names requests by `requestId` only, and only requests the
 * user saw; before calling the core, the ids are checked against the core's pending list at
 * that moment, so a request resolved elsewhere since the last frame (an agent approver, a
 * cancel, an expiry) is reported and never reaches `resolveApprovals`, and a request that
 * arrived since the last frame is never included.
 */

/** A run of requests from one asking agent through one chain. */
export interface RequestGroup {
  readonly key: string;
  readonly participantId: string;
  /** `user → ur-agent → scribe` (the asking agent last). */
  readonly chain: readonly string[];
  readonly requests: readonly PendingApproval[];
}

export interface QueueContent {
  readonly groups: readonly RequestGroup[];
  /** Every request the user can decide, in display order (groups flattened). */
  readonly flat: readonly PendingApproval[];
  /** Pending requests waiting on an agent approver (they climb to the user if unanswered). */
  readonly elsewhere: readonly PendingApproval[];
}

function byAge(a: PendingApproval, b: PendingApproval): number {
  if (a.at !== b.at) return a.at < b.at ? -1 : 1;
  return a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : 0;
}

/** The chain as shown: the event's chain, ending with the asking agent. */
export function chainOf(request: PendingApproval): readonly string[] {
  const chain = request.chain.length > 0 ? [...request.chain] : ['user'];
  if (chain[chain.length - 1] !== request.participantId) chain.push(request.participantId);
  return chain;
}

/** Requests for the user, grouped by asking agent and chain, groups in order of their oldest request. */
export function queueContent(pending: Readonly<Record<string, PendingApproval>>): QueueContent {
  const all = Object.values(pending).sort(byAge);
  const mine = all.filter((r) => r.approverId === 'user');
  const groups = new Map<string, { participantId: string; chain: readonly string[]; requests: PendingApproval[] }>();
  for (const request of mine) {
    const chain = chainOf(request);
    const key = chain.join('\u0000');
    const group = groups.get(key);
    if (group) group.requests.push(request);
    else groups.set(key, { participantId: request.participantId, chain, requests: [request] });
  }
  const list = [...groups].map(([key, g]) => ({ key, ...g }));
  return { groups: list, flat: list.flatMap((g) => g.requests), elsewhere: all.filter((r) => r.approverId !== 'user') };
}

/** `⚙ file_write notes/a.md`-style label: tool and key argument. */
export function requestLabel(request: PendingApproval): string {
  const arg = keyArgumentOf(request.toolName, request.input);
  const label = arg ? `${request.toolName} ${arg}` : request.toolName;
  // A merge that conflicts with the workspace cannot be approved (docs/worktrees.md#merge-requests).
  return mergeConflictOf(request.toolName, request.input) ? `${label} [conflict]` : label;
}

/** The rule that asked: `rule writes-ask: reason`; without a rule, the core's reason (or the default). */
export function ruleText(request: PendingApproval): string {
  if (!request.ruleId) return request.reason ?? 'no rule matched (default: ask)';
  return request.reason ? `rule ${request.ruleId}: ${request.reason}` : `rule ${request.ruleId}`;
}

/** The marked requests still shown, else the highlighted one. */
export function targetsOf(flat: readonly PendingApproval[], marked: ReadonlySet<string>, selected: string | null): string[] {
  const shownMarked = flat.filter((r) => marked.has(r.requestId)).map((r) => r.requestId);
  if (shownMarked.length > 0) return shownMarked;
  return selected !== null && flat.some((r) => r.requestId === selected) ? [selected] : [];
}

export type Decision = 'approve' | 'reject' | 'allow';

export interface DecisionOutcome {
  readonly level: 'info' | 'warn' | 'error';
  readonly text: string;
  /** Ids the core accepted. */
  readonly applied: readonly string[];
  /** Ids that were no longer pending (reported, not sent). */
  readonly vanished: readonly string[];
}

/**
 * Apply one decision to `ids` (as the user saw them, `shown` gives their labels).
 * Calls `core.resolveApprovals` at most once, with only the ids still pending now.
 */
export function applyDecision(
  core: Pick<LegionCore, 'pendingApprovals' | 'resolveApprovals'>,
  ids: readonly string[],
  decision: Decision,
  reason: string | undefined,
  shown: readonly PendingApproval[],
): DecisionOutcome {
  const label = (id: string): string => {
    const r = shown.find((x) => x.requestId === id);
    return r ? requestLabel(r) : id;
  };
  const live = new Set(core.pendingApprovals().map((r) => r.requestId));
  const still = ids.filter((id) => live.has(id));
  const vanished = ids.filter((id) => !live.has(id));
  const gone = vanished.length === 0 ? '' :
    `${vanished.length === 1 ? '1 request was' : `${vanished.length} requests were`} already resolved elsewhere and left alone (${vanished.map(label).join(', ')})`;
  if (still.length === 0) {
    return { level: 'warn', text: gone || 'nothing to decide', applied: [], vanished };
  }
  const verb = decision === 'reject' ? 'rejected' : 'approved';
  const trimmed = reason?.trim() ? reason.trim() : undefined;
  const options = decision === 'allow' ? { allowForSession: true } : trimmed !== undefined ? { reason: trimmed } : {};
  const result = core.resolveApprovals(still, decision === 'reject' ? 'rejected' : 'approved', options);
  if (!result.ok) return { level: 'error', text: `not applied: ${result.error}`, applied: [], vanished };
  const what = still.length === 1 ? label(still[0]!) : `${still.length} requests`;
  const extra = decision === 'allow' ? ' and allowed for the session' : trimmed !== undefined ? ` (${trimmed})` : '';
  const text = `${verb} ${what}${extra}${gone ? `; ${gone}` : ''}`;
  return { level: vanished.length > 0 ? 'warn' : 'info', text, applied: still, vanished };
}
