import type { EventBus } from '../events/bus';
import type { Message } from '../model/message';
import type { Participant } from '../collective/participant';
import type { AgentStatus } from '../events/types';
import type { UsageTotals } from '../providers/usage-totals';

/** One directional named session of the run (docs/design.md#participants-sessions-runs). */
export interface SessionInfo {
  readonly id: string;
  readonly initiatorId: string;
  readonly responderId: string;
  readonly name: string;
  readonly status: AgentStatus;
  /** ISO time of the last message or event in it. */
  readonly lastActivity: string;
  readonly messageCount: number;
  /** A user lane (`session-<agent>__user__<name>`) whose agent waits for the user's answer. */
  readonly awaitingUser?: boolean;
}

/** A pending approval as the UI and `legion run` see it. */
export interface PendingApproval {
  readonly requestId: string;
  readonly sessionId: string;
  readonly participantId: string;
  readonly chain: readonly string[];
  readonly toolUseId: string;
  readonly toolName: string;
  readonly input: unknown;
  readonly ruleId: string | null;
  readonly reason?: string;
  /** Who the request waits on now (changes when the cascade climbs). */
  readonly approverId: string;
  /** ISO time the request was raised. */
  readonly at: string;
}

export interface RunInfo {
  readonly id: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly sessionCount: number;
  readonly title?: string;
}

export type SendOutcome =
  | { ok: true; sessionId: string; queued: boolean }
  | { ok: false; error: string };

/**
 * The one command interface between a front end (TUI, `legion run`) and the core.
 * Everything that happens is reported on `bus`; commands return at once (work runs in
 * the background) except where they return a promise for a result.
 */
export interface LegionCore {
  readonly runId: string;
  readonly bus: EventBus;
  /** Send a message from the user to `responderId` in session `name` (default 'default'). */
  send(responderId: string, text: string, name?: string): SendOutcome;
  /**
   * Answer the question an agent asked the user in a user lane (responder `user`).
   * `send(agentId, text, name)` does the same when that agent waits in the lane named `name`.
   */
  reply?(sessionId: string, text: string): SendOutcome;
  /**
   * Token and cost totals of the run and of each session since the run began, restarts
   * included (kept in `runs/<runId>/usage.json`); `usage` events add to them from then on.
   */
  usage?(): { readonly run: UsageTotals; readonly sessions: Readonly<Record<string, UsageTotals>> };
  /** Wait until the session has no running or queued turn; resolves with the responder's last text. */
  idle(sessionId: string): Promise<string>;
  /** Create (or reuse) `user → responderId · name` without sending; emits `session-open` when new. */
  openSession(responderId: string, name?: string): { ok: true; sessionId: string } | { ok: false; error: string };
  /** Approve or reject pending requests; refuses unknown or already-resolved ids. */
  resolveApprovals(
    requestIds: readonly string[],
    decision: 'approved' | 'rejected',
    options?: { reason?: string; allowForSession?: boolean },
  ): { ok: true } | { ok: false; error: string };
  /** Interrupt the session's turn (and the sessions it waits on). */
  cancel(sessionId: string): void;
  participants(): Participant[];
  sessions(): SessionInfo[];
  history(sessionId: string): readonly Message[];
  pendingApprovals(): PendingApproval[];
  /** Cancel everything running, flush files, release the run lock. */
  shutdown(reason: string): Promise<void>;
}
