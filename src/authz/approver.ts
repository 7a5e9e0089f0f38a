import micromatch from 'micromatch';
import { USER_ID, type Participant } from '../collective/participant';

/** The tool an agent approver answers with; an agent without it cannot answer (docs/design.md#tools). */
export const RESOLVE_APPROVAL_TOOL = 'resolve_approval';

export interface ApproverQuery {
  /** Approver named by the rule that asked, if any. */
  readonly explicitApprover?: string;
  /** Only a person may answer (personOnly, src/authz/policy.ts): the user, whatever the chain or the rule says. */
  readonly personOnly?: boolean;
  /** Call chain, outermost first, ending with the asking participant (ToolContext.chain). */
  readonly chain: readonly string[];
  readonly toolName: string;
  readonly getParticipant: (id: string) => Participant | undefined;
}

/** True when `participant`'s `approvalAuthority` covers `toolName` (`'*'` or micromatch globs). */
export function hasAuthority(participant: Participant, toolName: string): boolean {
  const authority = participant.approvalAuthority;
  if (authority === '*') return true;
  return authority.length > 0 && micromatch.isMatch(toolName, authority as string[]);
}

/**
 * Whether `id` can answer a request for `toolName` raised by `askerId`: it exists, is
 * active, is not the asker, holds authority over the tool and (an agent) holds
 * `resolve_approval`. The user can always answer.
 */
export function canAnswer(id: string, askerId: string | undefined, toolName: string, getParticipant: ApproverQuery['getParticipant']): boolean {
  if (id === askerId) return false;
  if (id === USER_ID) return true;
  const participant = getParticipant(id);
  if (!participant || participant.status !== 'active') return false;
  if (!hasAuthority(participant, toolName)) return false;
  return participant.kind === 'user' || participant.tools.includes(RESOLVE_APPROVAL_TOOL);
}

/**
 * The approvers a request climbs through, nearest first: every caller up the chain that
 * can answer (each participant once, at its nearest position), always ending with `user`.
 * The explicit approver is not part of this list.
 */
export function approverLadder(query: Omit<ApproverQuery, 'explicitApprover'>): string[] {
  const { chain, toolName, getParticipant } = query;
  const askerId = chain[chain.length - 1];
  const seen = new Set<string>();
  const ladder: string[] = [];
  for (let i = chain.length - 2; i >= 0; i--) {
    const id = chain[i]!;
    if (seen.has(id)) continue;
    seen.add(id);
    if (canAnswer(id, askerId, toolName, getParticipant)) ladder.push(id);
  }
  if (!ladder.includes(USER_ID)) ladder.push(USER_ID);
  return ladder;
}

/**
 * The first approver of an `ask` (docs/design.md#authorization, step 4): the user when only a person
 * may answer (a shell line that is not plain words: an agent approver is a model), else the explicit approver when it can answer,
 * else the nearest caller up the chain with authority over the tool, else `user`.
 * An explicit approver may be outside the chain: the runtime must then deliver the request
 * to it (or climb at once with `nextApprover`).
 */
export function chooseApprover(query: ApproverQuery): string {
  if (query.personOnly) return USER_ID;
  const askerId = query.chain[query.chain.length - 1];
  const explicit = query.explicitApprover;
  if (explicit !== undefined && canAnswer(explicit, askerId, query.toolName, query.getParticipant)) return explicit;
  return approverLadder(query)[0]!;
}

/**
 * Where a request goes when `current` leaves it unanswered: the next approver further up
 * the chain that can answer, ending with `user`; null when `current` is the user (nowhere
 * left to climb). From an explicit approver outside the chain, climbing starts at the nearest caller.
 * Participants are re-checked, so one retired or stripped of authority meanwhile is skipped.
 */
export function nextApprover(current: string, query: Omit<ApproverQuery, 'explicitApprover'>): string | null {
  if (current === USER_ID) return null;
  const ladder = approverLadder(query);
  const at = ladder.indexOf(current);
  if (at === -1) {
    // Not on the ladder: an explicit approver, or a caller that can no longer answer.
    const callers = query.chain.slice(0, -1);
    const position = callers.lastIndexOf(current);
    if (position === -1) return ladder[0]!;
    // The next one whose nearest position is above `current` (the user, outside the chain, counts as above all).
    return ladder.find((id) => callers.lastIndexOf(id) < position) ?? USER_ID;
  }
  return ladder[at + 1] ?? null;
}

/** `chooseApprover`/`nextApprover` bound to the registry: fits the runtime's `ApproverPolicy` port. */
export function createApproverPolicy(getParticipant: ApproverQuery['getParticipant']): {
  choose(query: Omit<ApproverQuery, 'getParticipant'>): string;
  next(current: string, query: Omit<ApproverQuery, 'getParticipant' | 'explicitApprover'>): string | null;
} {
  return {
    choose: (query) => chooseApprover({ ...query, getParticipant }),
    next: (current, query) => nextApprover(current, { ...query, getParticipant }),
  };
}
