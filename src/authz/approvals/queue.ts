import type { EventBus } from '../../events/bus';
import type { ApprovalDecision, DecidedBy } from '../../events/types';
import { appendJsonl } from '../../storage/jsonl';
import type { Layout } from '../../storage/layout';
import type { Clock, IdSource } from './deps';
import { loadApprovalFile } from './load';
import type { ReassignLine, RequestLine, ResolveLine } from './schema';
import { mergeConflictOf } from './merge-input';
import { ApprovalState, type ApprovalOutcome, type ApprovalRecord, type ApprovalRequest } from './state';

export const EXPIRED_REASON = 'interrupted, ask again';
export const CANCELLED_REASON = 'cancelled';
export const SHUTDOWN_REASON = 'interrupted: Legion stopped while this request was pending';

/** What the runtime passes to `raise`: everything but the id and time, which the queue assigns. */
export type RaiseInput = Omit<ApprovalRequest, 'requestId' | 'at'>;
export type QueueResult = { ok: true } | { ok: false; error: string };

export interface ApprovalQueueOptions {
  readonly layout: Layout;
  readonly runId: string;
  readonly bus: EventBus;
  readonly clock: Clock;
  readonly ids: IdSource;
  /** Applied to request and resolve lines before they are written and kept (secret scrubbing); default none. */
  readonly scrub?: <T>(value: T) => T;
  /** Whether a tool's calls run in the OS sandbox (undefined: it starts no process); shown with each request. */
  readonly sandboxedTool?: (toolName: string) => boolean | undefined;
}

/**
 * The approval queue of one run, persisted in `approvals.jsonl`.
 * Contracts:
 * - Every change is appended to the file (one write per call) before any event is emitted
 *   and before any waiter wakes, so what the UI saw is always on disk.
 * - Batch operations are all-or-nothing: one bad id refuses the whole call, nothing applied.
 * - Synchronous except `load` and `wait`; safe to call from concurrent turns of one process.
 */
export interface ApprovalQueue {
  /** Read the file at startup (before any `raise`); returns what is still pending so the
   *  runtime can re-offer it (or `expire` what no turn waits for), and load problems
   *  (torn last line, bad lines) for a `notice`. A torn tail without newline is cut off.
   *  `idsOnly`: the file's requests are other queues' (engine mode's hub: its workers' write
   *  them, docs/engine.md#approvals): none becomes this queue's (none pending, none to decide),
   *  only their ids stay reserved so a request it raises never takes one. The other queues go on
   *  writing after this load, each knowing only the ids it read: this queue's own requests take
   *  ids of a form theirs never have (`apr-h<n>`), so neither takes the other's later ones. */
  load(options?: { readonly idsOnly?: boolean }): Promise<{ pending: ApprovalRequest[]; issues: string[] }>;
  /** Persist the batch (one write), then emit `approval-request` for each. Throws only on I/O failure. */
  raise(requests: readonly RaiseInput[]): ApprovalRequest[];
  /**
   * Resolves with the outcome once the request is decided (at once if it already was).
   * When `signal` aborts first, the request is withdrawn (rejected, decidedBy `cancel`) —
   * unless the queue was closed, in which case it stays pending on disk for the next process.
   * Rejects only for an unknown id (a runtime bug).
   */
  wait(requestId: string, signal?: AbortSignal): Promise<ApprovalOutcome>;
  /** Approve or reject a batch. Refuses (applying nothing) unknown, already-resolved or, with
   *  `onlyApprover`, requests that wait on someone else. `reason` defaults to "<decision> by <decidedBy>". */
  resolve(
    requestIds: readonly string[],
    decision: ApprovalDecision,
    options: { readonly decidedBy: DecidedBy; readonly reason?: string; readonly onlyApprover?: string },
  ): QueueResult;
  /** Move a pending request to another approver (the cascade climbing); re-emits `approval-request`. */
  reassign(requestId: string, approverId: string): QueueResult;
  /** Reject still-pending requests as `cancel` (turn interrupted). Ids already resolved are skipped. Returns the ids withdrawn. */
  withdraw(requestIds: readonly string[], reason?: string): string[];
  /** Mark still-pending requests `expired` ("interrupted, ask again"): their turn died with a previous process. Returns the ids expired. */
  expire(requestIds: readonly string[]): string[];
  /** Pending requests, oldest first, optionally only those waiting on one approver. */
  pending(filter?: { readonly approverId?: string }): ApprovalRequest[];
  /** Every request of the run with its outcome, in the order raised (a restart finds a batch's requests here). */
  records(): ApprovalRecord[];
  /** Emit `approval-request` again for the still-pending ids (a restart re-offers what a resumed turn
   *  waits for; nothing is written: the requests are on disk). Returns the ids re-offered. */
  reoffer(requestIds: readonly string[]): string[];
  get(requestId: string): ApprovalRecord | undefined;
  /** Shutdown: stop writing; every waiter resolves at once with a rejection that is NOT persisted,
   *  so the requests stay pending on disk. Later writes fail. */
  close(): void;
}

type Waiter = (outcome: ApprovalOutcome) => void;

export function createApprovalQueue(options: ApprovalQueueOptions): ApprovalQueue {
  const { layout, runId, bus, clock, ids } = options;
  const scrub = options.scrub ?? (<T>(value: T): T => value);
  const file = layout.approvals(runId);
  let state = new ApprovalState();
  /** Ids of requests in the file that are not this queue's (`load({ idsOnly })`). */
  const reserved = new Set<string>();
  /** `h` once loaded `idsOnly`: the file has other writers (`apr-<n>`), this queue's ids are `apr-h<n>`. */
  let idForm = '';
  const waiters = new Map<string, Set<Waiter>>();
  let closed = false;

  const sandboxField = (toolName: string): { sandboxed?: boolean } => {
    const sandboxed = options.sandboxedTool?.(toolName);
    return sandboxed === undefined ? {} : { sandboxed };
  };

  const wake = (requestId: string, outcome: ApprovalOutcome): void => {
    const set = waiters.get(requestId);
    if (!set) return;
    waiters.delete(requestId);
    for (const waiter of set) waiter(outcome);
  };

  const emitRequest = (request: ApprovalRequest): void => {
    bus.emit({
      type: 'approval-request',
      requestId: request.requestId,
      sessionId: request.sessionId,
      participantId: request.participantId,
      chain: [...request.chain],
      toolUseId: request.toolUseId,
      toolName: request.toolName,
      input: request.input,
      ruleId: request.ruleId,
      approverId: request.approverId,
      reason: request.reason,
      ...sandboxField(request.toolName),
    });
  };

  /** Append resolve lines for ids known to be pending, then apply, emit, wake. */
  const settle = (requestIds: readonly string[], decision: ResolveLine['decision'], decidedBy: DecidedBy, reason: string): void => {
    const at = clock().toISOString();
    const lines: ResolveLine[] = scrub(requestIds.map((requestId): ResolveLine => ({ kind: 'resolve', version: 1, requestId, decision, decidedBy, reason, at })));
    appendJsonl(file, ...lines);
    for (const line of lines) {
      state.applyLine(line);
      // The event union knows approved | rejected; an expired request is a rejection to listeners.
      bus.emit({ type: 'approval-resolve', requestId: line.requestId, decision: decision === 'expired' ? 'rejected' : decision, decidedBy, reason: line.reason });
      wake(line.requestId, { decision, decidedBy, reason: line.reason });
    }
  };

  const writeError = (error: unknown): QueueResult => ({ ok: false, error: `could not write ${file}: ${(error as Error).message}` });
  const closedError: QueueResult = { ok: false, error: 'the approval queue is closed (Legion is stopping)' };
  const pendingOnly = (requestIds: readonly string[]): string[] =>
    [...new Set(requestIds)].filter((id) => {
      const record = state.records.get(id);
      return record !== undefined && record.outcome === undefined;
    });

  return {
    async load(loadOptions = {}) {
      if (state.records.size > 0) throw new Error('approval queue: load() must be called before raise()');
      const loaded = await loadApprovalFile(file);
      if (loadOptions.idsOnly) {
        for (const id of loaded.state.records.keys()) reserved.add(id);
        idForm = 'h';
        return { pending: [], issues: loaded.issues };
      }
      state = loaded.state;
      return { pending: state.pending(), issues: loaded.issues };
    },

    raise(requests) {
      if (closed) throw new Error('the approval queue is closed (Legion is stopping)');
      if (requests.length === 0) return [];
      const at = clock().toISOString();
      const taken = new Set<string>();
      const freshId = (): string => {
        // An id source restarted with the process (a counter) skips ids the file already holds.
        for (let tries = 0; tries <= state.records.size + reserved.size + requests.length; tries++) {
          const id = `apr-${idForm}${ids()}`;
          if (!state.records.has(id) && !reserved.has(id) && !taken.has(id)) return taken.add(id), id;
        }
        throw new Error('approval queue: the id source keeps returning ids already in use');
      };
      const lines: RequestLine[] = scrub(requests.map((r): RequestLine => {
        const requestId = freshId();
        return {
          kind: 'request', version: 1, requestId, sessionId: r.sessionId, participantId: r.participantId,
          chain: [...r.chain], toolUseId: r.toolUseId, toolName: r.toolName, input: r.input,
          ruleId: r.ruleId, reason: r.reason, approverId: r.approverId, at,
        };
      }));
      appendJsonl(file, ...lines);
      const out: ApprovalRequest[] = [];
      for (const line of lines) {
        state.applyLine(line);
        const request = state.records.get(line.requestId)!.request;
        out.push(request);
        emitRequest(request);
      }
      return out;
    },

    wait(requestId, signal) {
      const record = state.records.get(requestId);
      if (!record) return Promise.reject(new Error(`approval queue: unknown request ${requestId}`));
      if (record.outcome) {
        const { decision, decidedBy, reason } = record.outcome;
        return Promise.resolve({ decision, decidedBy, reason });
      }
      if (closed) return Promise.resolve({ decision: 'rejected', decidedBy: 'cancel', reason: SHUTDOWN_REASON });
      return new Promise<ApprovalOutcome>((resolvePromise) => {
        let set = waiters.get(requestId);
        if (!set) waiters.set(requestId, (set = new Set()));
        const onAbort = (): void => {
          if (closed) return;
          // Withdrawing wakes this waiter (and any other) through the normal path.
          try {
            settle([requestId], 'rejected', 'cancel', CANCELLED_REASON);
          } catch {
            set!.delete(waiter);
            resolvePromise({ decision: 'rejected', decidedBy: 'cancel', reason: CANCELLED_REASON });
          }
        };
        const waiter: Waiter = (outcome) => {
          signal?.removeEventListener('abort', onAbort);
          resolvePromise(outcome);
        };
        set.add(waiter);
        if (signal?.aborted) onAbort();
        else signal?.addEventListener('abort', onAbort, { once: true });
      });
    },

    resolve(requestIds, decision, opts) {
      if (closed) return closedError;
      const unique = [...new Set(requestIds)];
      if (unique.length === 0) return { ok: false, error: 'no approval request given' };
      const problems: string[] = [];
      for (const id of unique) {
        const record = state.records.get(id);
        if (!record) problems.push(`unknown approval request "${id}"`);
        else if (record.outcome) problems.push(`approval request ${id} was already ${record.outcome.decision} (by ${record.outcome.decidedBy})`);
        else if (opts.onlyApprover !== undefined && record.request.approverId !== opts.onlyApprover) {
          problems.push(`approval request ${id} waits on ${record.request.approverId}, not on ${opts.onlyApprover}`);
        } else if (decision === 'approved' && mergeConflictOf(record.request.toolName, record.request.input)) {
          problems.push(`merge request ${id} conflicts in ${mergeConflictOf(record.request.toolName, record.request.input)!.join(', ')} and cannot be approved (reject it, or message the agent again to rebase)`);
        }
      }
      if (problems.length > 0) return { ok: false, error: `${problems.join('; ')}: nothing was ${decision}` };
      try {
        settle(unique, decision, opts.decidedBy, opts.reason?.trim() || `${decision} by ${opts.decidedBy}`);
      } catch (error) {
        return writeError(error);
      }
      return { ok: true };
    },

    reassign(requestId, approverId) {
      if (closed) return closedError;
      const record = state.records.get(requestId);
      if (!record) return { ok: false, error: `unknown approval request "${requestId}"` };
      if (record.outcome) return { ok: false, error: `approval request ${requestId} was already ${record.outcome.decision}` };
      if (record.request.approverId === approverId) return { ok: true };
      const line: ReassignLine = { kind: 'reassign', version: 1, requestId, approverId, at: clock().toISOString() };
      try {
        appendJsonl(file, line);
      } catch (error) {
        return writeError(error);
      }
      state.applyLine(line);
      emitRequest(state.records.get(requestId)!.request);
      return { ok: true };
    },

    withdraw(requestIds, reason = CANCELLED_REASON) {
      if (closed) return [];
      const ids_ = pendingOnly(requestIds);
      if (ids_.length > 0) settle(ids_, 'rejected', 'cancel', reason);
      return ids_;
    },

    expire(requestIds) {
      if (closed) return [];
      const ids_ = pendingOnly(requestIds);
      if (ids_.length > 0) settle(ids_, 'expired', 'cancel', EXPIRED_REASON);
      return ids_;
    },

    pending(filter) {
      return state.pending(filter?.approverId).map((request) => ({ ...request, ...sandboxField(request.toolName) }));
    },

    records() {
      return [...state.records.values()];
    },

    reoffer(requestIds) {
      if (closed) return [];
      const ids_ = pendingOnly(requestIds);
      for (const id of ids_) emitRequest(state.records.get(id)!.request);
      return ids_;
    },

    get(requestId) {
      return state.records.get(requestId);
    },

    close() {
      if (closed) return;
      closed = true;
      for (const requestId of [...waiters.keys()]) wake(requestId, { decision: 'rejected', decidedBy: 'cancel', reason: SHUTDOWN_REASON });
    },
  };
}
