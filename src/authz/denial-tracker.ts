import type { DecidedBy } from '../events/types';
import type { AuditDecision } from './audit';

/**
 * Denial loops (issue 5): an agent whose calls keep being denied in one session is told to
 * change approach, and the user gets a `notice`. Contract: per (session, participant), every
 * `threshold`-th consecutive denial (3, 6, …) returns the note and calls `onLoop`; any allowed
 * or approved call resets the count. In-memory: a restart starts counting afresh.
 */
export const DENIAL_LOOP_NOTE =
  'Several of your tool calls were denied in a row: change approach or ask your caller.';

export type DenialOutcome = 'denied' | 'allowed';

export interface DenialLoop {
  readonly sessionId: string;
  readonly participantId: string;
  readonly count: number;
  /** For the `notice` event (level warn). */
  readonly notice: string;
}

export interface DenialTracker {
  /** Returns the note for the agent when this denial completes a loop, else null. */
  record(sessionId: string, participantId: string, outcome: DenialOutcome): string | null;
  /** Consecutive denials so far. */
  count(sessionId: string, participantId: string): number;
}

export function createDenialTracker(options: { readonly threshold?: number; readonly onLoop?: (loop: DenialLoop) => void } = {}): DenialTracker {
  const threshold = Math.max(1, options.threshold ?? 3);
  const counts = new Map<string, number>();
  const keyOf = (sessionId: string, participantId: string): string => `${sessionId}\u0000${participantId}`;
  return {
    record(sessionId, participantId, outcome) {
      const key = keyOf(sessionId, participantId);
      if (outcome === 'allowed') {
        counts.delete(key);
        return null;
      }
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      if (count % threshold !== 0) return null;
      const notice = `${participantId} had ${count} tool calls denied in a row in ${sessionId}; it was told to change approach or ask its caller`;
      options.onLoop?.({ sessionId, participantId, count, notice });
      return DENIAL_LOOP_NOTE;
    },
    count: (sessionId, participantId) => counts.get(keyOf(sessionId, participantId)) ?? 0,
  };
}

/**
 * What an authorization decision means for the tracker: deny and rejections count, allow and
 * approvals reset; a cancel (the turn was interrupted) and an expiry say nothing about the
 * agent's approach, so they are ignored (null).
 */
export function denialOutcomeOf(decision: AuditDecision, decidedBy: DecidedBy): DenialOutcome | null {
  switch (decision) {
    case 'allow':
    case 'approved':
      return 'allowed';
    case 'deny':
      return 'denied';
    case 'rejected':
      return decidedBy === 'cancel' ? null : 'denied';
    case 'expired':
      return null;
    default: {
      const never: never = decision;
      return never;
    }
  }
}
