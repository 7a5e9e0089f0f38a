import type { ContextRecord } from '../context/records';
import type { Message } from '../model/message';
import type { Participant } from '../collective/participant';
import type { PendingApproval, SessionInfo } from '../runtime/core-api';
import type { RunUsage } from '../runtime/usage-book';
import type { Core } from '../runtime/commands';

/**
 * Everything a front end shows at start, taken in one synchronous step so it is exactly the
 * state after event `lastSeq` (the events after it follow on the socket).
 */
export interface Snapshot {
  readonly runId: string;
  readonly lastSeq: number;
  readonly participants: Participant[];
  readonly sessions: SessionInfo[];
  readonly histories: Record<string, readonly Message[]>;
  readonly contextRecords: Record<string, readonly ContextRecord[]>;
  readonly pendingApprovals: PendingApproval[];
  readonly usage: RunUsage;
}

export function takeSnapshot(core: Core): Snapshot {
  const sessions = core.sessions();
  const histories: Record<string, readonly Message[]> = {};
  const contextRecords: Record<string, readonly ContextRecord[]> = {};
  for (const s of sessions) {
    histories[s.id] = core.history(s.id);
    const records = core.contextRecords(s.id);
    if (records.length > 0) contextRecords[s.id] = records;
  }
  return {
    runId: core.runId, lastSeq: core.bus.lastSeq(), participants: core.participants(), sessions, histories, contextRecords,
    pendingApprovals: core.pendingApprovals(), usage: core.usage(),
  };
}
