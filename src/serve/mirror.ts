import type { ContextRecord } from '../context/records';
import type { Message } from '../model/message';
import type { Participant } from '../collective/participant';
import type { PendingApproval, SessionInfo } from '../runtime/core-api';
import type { LegionEvent } from '../events/types';
import type { RunUsage } from '../runtime/usage-book';
import { createUsageAccumulator, type UsageAccumulator } from '../providers/usage-totals';
import type { Snapshot } from './snapshot';

/**
 * A front end's copy of the server's run state, so a remote core answers the synchronous
 * reads of `LegionCore` (sessions, history, pending approvals…) at once: built from a
 * snapshot, then kept current by every event, applied before the event reaches the front end's
 * subscribers (who read the core in reaction). What an event does not carry (a participant's
 * new definition, a session's "awaiting the user" flag, new compaction records) is fetched by
 * the remote core before the event is passed on (`refreshFor`).
 */
export interface Mirror {
  participants: Participant[];
  readonly sessions: Map<string, SessionInfo>;
  readonly histories: Map<string, Message[]>;
  readonly contextRecords: Map<string, readonly ContextRecord[]>;
  readonly pending: Map<string, PendingApproval>;
  readonly usage: UsageAccumulator;
  lastSeq: number;
}

export function mirrorFrom(snapshot: Snapshot): Mirror {
  return {
    participants: snapshot.participants,
    sessions: new Map(snapshot.sessions.map((s) => [s.id, s])),
    histories: new Map(Object.entries(snapshot.histories).map(([id, list]) => [id, [...list]])),
    contextRecords: new Map(Object.entries(snapshot.contextRecords)),
    pending: new Map(snapshot.pendingApprovals.map((p) => [p.requestId, p])),
    usage: createUsageAccumulator(snapshot.usage),
    lastSeq: snapshot.lastSeq,
  };
}

export function usageOf(mirror: Mirror): RunUsage {
  return { run: mirror.usage.run(), sessions: Object.fromEntries(mirror.usage.sessions()) };
}

/** What must be fetched from the server before `event` is passed on (null: nothing). */
export type Refresh = { kind: 'participants' } | { kind: 'sessions' } | { kind: 'contextRecords'; sessionId: string };

export function refreshFor(mirror: Mirror, event: LegionEvent): Refresh | null {
  switch (event.type) {
    case 'participant-change': return { kind: 'participants' };
    case 'compaction': return { kind: 'contextRecords', sessionId: event.sessionId };
    // An agent asking (or done asking) the user in a user lane: the flag lives on the server.
    case 'agent-status': return mirror.sessions.get(event.sessionId)?.responderId === 'user' ? { kind: 'sessions' } : null;
    default: return null;
  }
}

/** Apply one event to the mirror (events at or before its `lastSeq` are ignored). */
export function applyEvent(mirror: Mirror, event: LegionEvent): void {
  if (event.seq <= mirror.lastSeq && event.seq > 0) return;
  mirror.lastSeq = event.seq;
  switch (event.type) {
    case 'session-open':
      if (!mirror.sessions.has(event.sessionId)) {
        mirror.sessions.set(event.sessionId, {
          id: event.sessionId, initiatorId: event.initiatorId, responderId: event.responderId, name: event.name,
          status: 'idle', lastActivity: event.at, messageCount: 0,
        });
        mirror.histories.set(event.sessionId, []);
      }
      return;
    case 'message-add': {
      const list = mirror.histories.get(event.sessionId) ?? [];
      list.push(event.message);
      mirror.histories.set(event.sessionId, list);
      const s = mirror.sessions.get(event.sessionId);
      if (s) mirror.sessions.set(s.id, { ...s, messageCount: list.length, lastActivity: event.message.at });
      return;
    }
    case 'agent-status': {
      const s = mirror.sessions.get(event.sessionId);
      if (s) mirror.sessions.set(s.id, { ...s, status: event.status, lastActivity: event.at });
      return;
    }
    case 'approval-request':
      mirror.pending.set(event.requestId, {
        requestId: event.requestId, sessionId: event.sessionId, participantId: event.participantId, chain: event.chain,
        toolUseId: event.toolUseId, toolName: event.toolName, input: event.input, ruleId: event.ruleId, approverId: event.approverId,
        at: event.at, ...(event.reason !== undefined ? { reason: event.reason } : {}), ...(event.sandboxed !== undefined ? { sandboxed: event.sandboxed } : {}),
      });
      return;
    case 'approval-resolve':
      mirror.pending.delete(event.requestId);
      return;
    case 'usage':
      mirror.usage.add({
        sessionId: event.sessionId, model: event.model, inputTokens: event.inputTokens, outputTokens: event.outputTokens,
        cacheReadTokens: event.cacheReadTokens, cacheWriteTokens: event.cacheWriteTokens, costUsd: event.costUsd,
      });
      return;
    default:
      return;
  }
}
