import { USER_ID } from '../collective/participant';
import type { ApprovalQueue, ApprovalRequest } from '../authz/approvals';
import type { HeadlessMode } from './env';
import type { ApprovalsAcross, ApproverPolicy, RemoteAnswer } from './ports';
import type { Turn } from './turn';

/** Where approval requests go, and how they climb (docs/design.md#authorization, step 4 cascade). */
export interface Router {
  /** Route a request to its approver (`asker`: the turn that raised it, if it runs in this process). */
  route(asker: Turn | undefined, request: ApprovalRequest): void;
  /** Move a request to the next approver up its chain (ending with the user) and route it there. */
  climb(request: ApprovalRequest): void;
  /**
   * When an agent's turn ends, what it was asked to decide and left undecided climbs to the
   * next approver (a request never waits on a participant who cannot answer it).
   */
  climbUnanswered(turn: Turn): void;
  /** Requests handed to `turn`'s agent that it has not decided yet. */
  undecided(turn: Turn): ApprovalRequest[];
}

export interface RouterDeps {
  readonly approvals: ApprovalQueue;
  readonly approvers: ApproverPolicy;
  readonly headless?: HeadlessMode;
  /** The asking turn of each request raised by this process. */
  readonly askers: ReadonlyMap<string, Turn>;
  /**
   * Builds, once and given the router's `climb`, how a request reaches an agent approver outside
   * the chain (approver-turn.ts, passed in: it starts a turn; what it leaves undecided climbs).
   */
  outsideChain(climb: (request: ApprovalRequest) => void): (request: ApprovalRequest) => void;
  /** Engine mode: approvers whose turns wait in other invocations (docs/engine.md#approvals-across-objects). */
  readonly across?: ApprovalsAcross;
}

/**
 * - the user: the approval queue the UI shows; headless, decided at once per `--approve`
 *   (decidedBy `headless`);
 * - an agent: delivered to the communicator call through which that agent waits on the
 *   asking turn (its result will list the request); a caller on the chain that cannot
 *   answer now (finished, cancelled) is skipped and the request climbs;
 * - an agent outside the chain (an explicit approver): a turn of its own is started to
 *   decide it (approver-turn.ts);
 * - engine mode: an agent whose communicator call waits in another invocation up the chain:
 *   sent there (`across.upstream`); its decision is applied here as its `resolve_approval`
 *   would be in-process, or the request climbs from it.
 */
export function createRouter(deps: RouterDeps): Router {
  const { approvals, approvers } = deps;

  const toUser = (request: ApprovalRequest): void => {
    const headless = deps.headless;
    if (!headless) return; // the `approval-request` event put it in the UI's queue
    const approve = headless.approve === 'all';
    approvals.resolve([request.requestId], approve ? 'approved' : 'rejected', {
      decidedBy: 'headless',
      reason: approve ? 'approved by --approve all' : 'rejected: no user to ask in a headless run (--approve deny)',
    });
  };

  const route = (asker: Turn | undefined, request: ApprovalRequest): void => {
    if (request.approverId === USER_ID) return toUser(request);
    for (let link = asker?.parent; link; link = link.owner.parent) {
      const owner = link.owner;
      if (owner.agent.id !== request.approverId) continue;
      if (owner.finished || owner.controller.signal.aborted) break;
      link.deliver(request);
      return;
    }
    if (!request.chain.includes(request.approverId)) return deliverOutsideChain(request);
    if (asker && deps.across?.upstream(asker, request, answeredElsewhere(request))) return;
    climbHere(request); // raised here: climbed here
  };

  /** What an approver in another invocation answered, applied here (the asker's core holds the request). */
  const answeredElsewhere = (request: ApprovalRequest): Parameters<ApprovalsAcross['upstream']>[2] => ({
    answered(answer: RemoteAnswer) {
      const current = approvals.get(request.requestId);
      if (!current || current.outcome) return; // withdrawn meanwhile (the turn cancelled)
      if (answer.kind === 'decision') {
        const applied = approvals.resolve([request.requestId], answer.decision, {
          decidedBy: `agent:${request.approverId}`, onlyApprover: request.approverId, ...(answer.reason?.trim() ? { reason: answer.reason.trim() } : {}),
        });
        if (applied.ok) return; // else (a merge request that conflicts by now): it climbs
      }
      // Here, even when this core also holds the approver's side (a worker's core shared by both turns).
      climbHere(current.request);
    },
    superseded(requestId) {
      approvals.withdraw([requestId], `asked again as ${request.requestId} (the turn was replayed)`);
    },
  });

  const climb = (request: ApprovalRequest): void => {
    // Sent here by a delegate elsewhere: the asker's core climbs it (its record there is the live one).
    if (deps.across?.knows(request.requestId)) return deps.across.climb(request.requestId);
    climbHere(request);
  };

  /** Climb a request this core raised (the asker's side, also when an approver elsewhere sends it on). */
  const climbHere = (request: ApprovalRequest): void => {
    const next = approvers.next(request.approverId, { chain: request.chain, toolName: request.toolName }) ?? USER_ID;
    const moved = approvals.reassign(request.requestId, next);
    if (!moved.ok) return; // already decided (or the queue is closing): nothing to route
    const updated = approvals.get(request.requestId)?.request;
    if (updated) route(deps.askers.get(request.requestId), updated);
  };

  const deliverOutsideChain = deps.outsideChain(climb);

  const undecided = (turn: Turn): ApprovalRequest[] => {
    const out: ApprovalRequest[] = [];
    for (const requestId of turn.delivered) {
      // Held first: in engine mode the queue also holds, from disk, requests other cores raised.
      if (deps.across?.knows(requestId)) {
        const held = deps.across.held(requestId);
        if (held && held.approverId === turn.agent.id) out.push(held);
        continue;
      }
      const record = approvals.get(requestId);
      if (record && !record.outcome && record.request.approverId === turn.agent.id) out.push(record.request);
    }
    return out;
  };

  return {
    route,
    climb,
    undecided,
    climbUnanswered(turn) {
      if (turn.delivered.size === 0) return;
      for (const requestId of turn.delivered) {
        if (deps.across?.knows(requestId)) {
          if (deps.across.held(requestId)?.approverId === turn.agent.id) deps.across.climb(requestId);
          continue;
        }
        const record = approvals.get(requestId);
        if (!record || record.outcome || record.request.approverId !== turn.agent.id) continue;
        climb(record.request);
      }
      turn.delivered.clear();
    },
  };
}
