import type { ApprovalQueue } from '../authz/approvals';
import { REDACTED } from '../authz/redact';
import { toolUsesOf } from '../model/message';
import { failed, type Batch, type ResumeChild, type ResumePoint } from './call-state';
import type { Prescan } from './prescan';
import type { Turn } from './turn';
import { MAY_HAVE_RUN, rejectionText, SECRET_NOT_KEPT } from './format';
import type { ToolCatalog } from '../tools/types';

/** The restart pre-pass: the open batch of `point` as call states, ready for the approval and execute phases. */
export type ResumeCalls = (turn: Turn, batch: Batch, point: ResumePoint) => void;

/**
 * What a restart adds to the normal path, all of it owned here: the pre-pass itself, the
 * resumed turns below a resumed batch that its communicator calls re-attach to, and what is
 * left to do when such a batch closes. A batch that was not resumed is unknown here.
 */
export interface ResumePrepass {
  readonly resumeCalls: ResumeCalls;
  /**
   * The resumed turn in `sessionId` that communicator call `toolUseId` of a resumed batch
   * re-attaches to (delegation.ts), taken once; undefined for any other call.
   */
  takeChild(toolUseId: string, sessionId: string): ResumeChild | undefined;
  /**
   * When `batch` closes (execute-phase.ts): the resumed turns below it that no call took are
   * abandoned (unless Legion is stopping: they stay for the next start), and the notes of the
   * restart (delegations it cut off) join the batch's, after its own.
   */
  closing(batch: Batch, stopping: boolean): void;
}

export interface PrepassDeps {
  readonly prescan: Prescan;
  readonly approvals: ApprovalQueue;
  /** Which calls are read-only (`Tool.readOnly`): those run again after a restart. */
  readonly tools: ToolCatalog;
  /** A resumed turn that will not run after all (open-calls.ts). */
  abandon(child: ResumeChild): void;
}

/** A resumed batch's part of the restart: the turns below it, the calls that re-attach, its notes. */
interface ResumedBatch {
  readonly children: ReadonlyMap<string, ResumeChild>;
  readonly attaching: Set<string>;
  readonly notes: readonly string[];
}

/**
 * A batch resumed after a restart (restart.ts) goes through the same phases as a new one;
 * this pre-pass produces its call states instead of the pre-scan:
 * - every call is checked again (tool held, input valid, rules); a call with a request from
 *   before is not asked again — it becomes an `ask` holding that request (re-offered, or its
 *   decision taken) — unless the rules now deny it, which withdraws the request;
 * - a call whose stored input holds a scrubbed secret is not run with the placeholder;
 * - stage `running` (the batch was running when Legion stopped): what may have run is not
 *   repeated — only communicator calls re-attaching to a resumed turn below and read-only
 *   calls run again; a call whose request was decided before the stop takes that decision.
 */
export function createResumePrepass(deps: PrepassDeps): ResumePrepass {
  const { prescan, approvals } = deps;
  /** Communicator calls of resumed batches → the resumed turn each re-attaches to (consumed once). */
  const reattach = new Map<string, ResumeChild>();
  const resumed = new WeakMap<Batch, ResumedBatch>();
  const isReadOnly = (name: string): boolean => deps.tools.get(name)?.readOnly === true;

  const resumeCalls: ResumeCalls = (turn, batch, point) => {
    for (const use of toolUsesOf(point.message)) {
      prescan.announce(turn, use);
      const rerun = point.stage === 'approvals' || isReadOnly(use.name);
      if (rerun && JSON.stringify(use.input ?? null).includes(REDACTED)) {
        // What is on disk is scrubbed: running it now would use "[REDACTED]" instead of the key.
        batch.endNew(use, failed('interrupted', SECRET_NOT_KEPT));
        continue;
      }
      const checked = prescan.screen(turn, batch, use);
      if (!checked) continue;
      const verdict = prescan.authorize(turn, use, checked.input);
      const earlier = point.requests.get(use.id);
      if (earlier && verdict.decision !== 'deny') {
        const asked = { decision: 'ask', ruleId: earlier.ruleId, reason: earlier.reason, source: 'rule' } as const;
        batch.add({ phase: 'ask', use, ...checked, verdict: asked, request: earlier });
        continue;
      }
      prescan.settle(turn, batch, { use, ...checked }, verdict);
    }

    // A request found again for a call that now ends otherwise (rules deny it now, tool gone, bad input) is withdrawn.
    for (const call of batch.calls) {
      const earlier = point.requests.get(call.use.id);
      if (earlier && call.phase === 'done') approvals.withdraw([earlier.requestId], `withdrawn after the restart: ${call.result.content}`);
    }
    const mine: ResumedBatch = { children: point.children, attaching: new Set(), notes: point.notes };
    resumed.set(batch, mine);
    if (point.stage !== 'running') return;

    // A batch that was running when Legion stopped: what may have run is not repeated.
    for (const call of [...batch.calls]) {
      if (call.phase === 'done') continue;
      const request = call.phase === 'ask' ? call.request : undefined;
      const outcome = request ? approvals.get(request.requestId)?.outcome : undefined;
      if (request && outcome?.decision !== 'approved') {
        // Decided (and audited) before the stop, not approved: it never ran.
        batch.end(call.use, outcome ? failed('rejected', rejectionText(outcome)) : failed('interrupted', MAY_HAVE_RUN));
        continue;
      }
      const child = point.children.get(call.use.id);
      if (child) {
        reattach.set(call.use.id, child);
        mine.attaching.add(call.use.id);
      } else if (!isReadOnly(call.use.name)) {
        batch.end(call.use, failed('interrupted', MAY_HAVE_RUN));
        continue;
      }
      if (request) batch.set({ phase: 'run', use: call.use, tool: call.tool, input: call.input }); // approved before the stop
    }
  };

  return {
    resumeCalls,
    takeChild(toolUseId, sessionId) {
      const child = reattach.get(toolUseId);
      if (!child || child.sessionId !== sessionId) return undefined;
      reattach.delete(toolUseId);
      return child;
    },
    closing(batch, stopping) {
      const mine = resumed.get(batch);
      if (!mine) return;
      resumed.delete(batch);
      for (const [useId, child] of mine.children) {
        const taken = mine.attaching.has(useId) && !reattach.has(useId);
        reattach.delete(useId);
        if (!taken && !stopping) deps.abandon(child);
      }
      batch.notes.push(...mine.notes);
    },
  };
}
