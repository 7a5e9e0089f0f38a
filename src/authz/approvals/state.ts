import type { DecidedBy } from '../../events/types';
import type { PendingApproval } from '../../model/approval';
import type { ApprovalLine, FinalDecision, RequestLine } from './schema';

/**
 * A request as the UI, `legion run` and the runtime see it: core-api's `PendingApproval`
 * (the public contract) with its reason always present.
 */
export interface ApprovalRequest extends PendingApproval {
  readonly reason: string;
}

/** How a request ended. `expired`: its waiting turn died with the process ("interrupted, ask again"). */
export interface ApprovalOutcome {
  readonly decision: FinalDecision;
  readonly decidedBy: DecidedBy;
  readonly reason: string;
}

export interface ApprovalRecord {
  readonly request: ApprovalRequest;
  /** Absent while pending. */
  readonly outcome?: ApprovalOutcome & { readonly at: string };
}

/**
 * Mutable in-memory state: records by id, in the order they were raised.
 * Contract of `applyLine` (shared by the live queue and the loader, so a restart
 * sees exactly what the process saw): a second `request` for a known id, a `resolve`
 * or `reassign` for an unknown or already-resolved id are ignored and reported.
 */
export class ApprovalState {
  readonly records = new Map<string, ApprovalRecord>();

  /** Returns a problem description when the line was ignored, else null. */
  applyLine(line: ApprovalLine): string | null {
    switch (line.kind) {
      case 'request': {
        if (this.records.has(line.requestId)) return `duplicate request ${line.requestId} ignored`;
        this.records.set(line.requestId, { request: toRequest(line) });
        return null;
      }
      case 'reassign': {
        const record = this.records.get(line.requestId);
        if (!record) return `reassign of unknown request ${line.requestId} ignored`;
        if (record.outcome) return `reassign of resolved request ${line.requestId} ignored`;
        this.records.set(line.requestId, { request: { ...record.request, approverId: line.approverId } });
        return null;
      }
      case 'resolve': {
        const record = this.records.get(line.requestId);
        if (!record) return `resolution of unknown request ${line.requestId} ignored`;
        if (record.outcome) return `second resolution of request ${line.requestId} ignored`;
        const outcome = { decision: line.decision, decidedBy: line.decidedBy, reason: line.reason, at: line.at };
        this.records.set(line.requestId, { request: record.request, outcome });
        return null;
      }
      default: {
        const never: never = line;
        return `unknown line ${JSON.stringify(never)}`;
      }
    }
  }

  pending(approverId?: string): ApprovalRequest[] {
    const out: ApprovalRequest[] = [];
    for (const record of this.records.values()) {
      if (record.outcome) continue;
      if (approverId !== undefined && record.request.approverId !== approverId) continue;
      out.push(record.request);
    }
    return out;
  }
}

function toRequest(line: RequestLine): ApprovalRequest {
  return {
    requestId: line.requestId,
    sessionId: line.sessionId,
    participantId: line.participantId,
    chain: [...line.chain],
    toolUseId: line.toolUseId,
    toolName: line.toolName,
    input: line.input,
    ruleId: line.ruleId,
    reason: line.reason,
    approverId: line.approverId,
    at: line.at,
  };
}
