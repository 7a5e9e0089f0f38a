import { USER_ID } from '../collective/participant';
import type { ApprovalQueue, ApprovalRequest } from '../authz/approvals';
import type { CollectiveRegistry } from '../collective/registry';
import { toolResultsOf, toolUsesOf, type Message } from '../model/message';
import { INTERRUPTED_RESULT } from '../model/repair';
import type { OpenCalls, SessionStore } from '../session/types';
import { sessionIdOf } from '../session/ids';
import type { ResumeChild, ResumePoint } from './call-state';
import type { Journal } from './journal';
import type { Slots } from './run-state';
import type { SessionSlot, Turn, TurnRequest } from './turn';
import { communicatorTarget, raisedFor, resumableChains, type ChainNode } from './resume-plan';
import { answerOpenCalls } from './open-calls';

/**
 * Pending approvals survive a restart (docs/architecture.md#restart). When Legion stops
 * (quit or crash) while a batch waits on approval requests, the batch stays open on disk; the
 * next start resumes it when its whole call chain can be rebuilt (see resume-plan.ts): the
 * user's lane `user → agent` directly, or through communicator calls (`user → ur-agent →
 * scribe`) whose callers' batches are open too.
 * - Stage `approvals` (the batch that asked): its calls never ran (calls run only once every
 *   request of the batch is decided). Each call is checked again, pending requests are
 *   re-offered under the same ids, decided ones keep their decision, then the batch runs.
 * - Stage `running` (a caller waiting on a delegation): its communicator call into the
 *   resumed session is re-attached to it (no new message is sent); other calls may have run
 *   before the stop: read-only ones run again, the others are answered "interrupted … may have
 *   taken effect" rather than repeated.
 * The turn starts at its open batch (`TurnStart` `resume`); resume-prepass.ts turns the batch
 * into call states. Everything else left open is answered "interrupted" and its requests expire.
 */

export interface PlannedResume {
  readonly sessionId: string;
  readonly agentId: string;
  readonly point: ResumePoint;
}

export interface ResumePlan {
  /** The user's lanes to resume (their chains below resume through them). */
  readonly resumes: PlannedResume[];
  /** Sessions the load left open that will not resume: answer them (`answerDropped`). */
  readonly dropped: OpenCalls[];
  /** Every request (pending or decided) the resumed batches hold: not to expire. */
  readonly requestIds: ReadonlySet<string>;
}

export interface PlanDeps {
  readonly registry: CollectiveRegistry;
  readonly approvals: ApprovalQueue;
  readonly sessions: SessionStore;
}

/**
 * Which of the sessions the load left open resume (after `approvals.load()`), as a tree per
 * user lane; the others are `dropped`.
 */
export function planResumes(deps: PlanDeps, leftOpen: readonly OpenCalls[]): ResumePlan {
  const isActiveAgent = (id: string): boolean => {
    const p = deps.registry.get(id);
    return p?.kind === 'agent' && p.status === 'active';
  };
  const nodes = resumableChains(deps.approvals.pending(), leftOpen, isActiveAgent);
  const records = deps.approvals.records();
  const resumed = new Set<string>();
  const requestIds = new Set<string>();

  const pointOf = (node: ChainNode): ResumePoint | null => {
    const messages = deps.sessions.get(node.open.sessionId)?.messages() ?? [];
    const last = messages[messages.length - 1];
    if (!last || last.role !== 'assistant' || toolUsesOf(last).length === 0) return null;
    const requests = new Map<string, ApprovalRequest>();
    for (const record of records) if (raisedFor(record.request, node.open)) requests.set(record.request.toolUseId, record.request);
    const children = new Map<string, ResumeChild>();
    for (const [useId, childId] of node.children) {
      const childNode = nodes.get(childId);
      const point = childNode ? pointOf(childNode) : null;
      if (childNode && point) children.set(useId, { sessionId: childId, agentId: childNode.open.key.responderId, point });
    }
    if (node.stage === 'running' && children.size === 0) return null;
    // Sessions this batch talks to itself get their own results; the others were earlier delegations.
    const own = node.open.uses.flatMap((u) => {
      const target = communicatorTarget(u);
      return target ? [sessionIdOf({ initiatorId: node.open.key.responderId, responderId: target.targetId, name: target.name })] : [];
    });
    const notes = lostDelegations(deps.sessions, node.open.key.responderId, messages, new Set([...nodes.keys(), ...own]));
    return { message: last, stage: node.stage, requests, children, notes };
  };
  /** Only chains that start (from a user's lane) count as resumed. */
  const collect = (sessionId: string, point: ResumePoint): void => {
    resumed.add(sessionId);
    for (const request of point.requests.values()) requestIds.add(request.requestId);
    for (const child of point.children.values()) collect(child.sessionId, child.point);
  };

  const resumes: PlannedResume[] = [];
  for (const node of nodes.values()) {
    if (node.open.key.initiatorId !== USER_ID) continue;
    const point = pointOf(node);
    if (!point) continue;
    resumes.push({ sessionId: node.open.sessionId, agentId: node.open.key.responderId, point });
    collect(node.open.sessionId, point);
  }
  return { resumes, dropped: leftOpen.filter((o) => !resumed.has(o.sessionId)), requestIds };
}

/**
 * Sessions the agent sent a message to during this turn (the delegations whose calls returned
 * early) that were cut off before replying (their last message is still the agent's or an
 * "interrupted" result): the communicator promised the agent their replies, which will not
 * come now.
 */
function lostDelegations(sessions: SessionStore, agentId: string, messages: readonly Message[], kept: ReadonlySet<string>): string[] {
  let turnStart = '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user' && toolResultsOf(m).length === 0) {
      turnStart = m.at;
      break;
    }
  }
  const lost = sessions.list().filter((s) => {
    if (s.key.initiatorId !== agentId || s.key.responderId === USER_ID || kept.has(s.id)) return false;
    const all = s.messages();
    const end = all[all.length - 1];
    // The agent's last message there (what started that session's last turn) was sent during this turn.
    const sent = all.findLast((m) => m.role === 'user' && toolResultsOf(m).length === 0);
    return end !== undefined && end.role === 'user' && sent !== undefined && sent.at >= turnStart;
  });
  if (lost.length === 0) return [];
  return [`[Legion restarted while this turn was waiting. These sessions had not replied yet and were interrupted: ${lost.map((s) => s.id).join(', ')}. Ask again if you still need their replies.]`];
}

/** Answer the open calls of sessions left open that will not resume ("interrupted"), with a notice. */
export function answerDropped(deps: { sessions: SessionStore; journal: Journal }, dropped: readonly OpenCalls[]): void {
  for (const open of dropped) {
    const session = deps.sessions.get(open.sessionId);
    if (!session) continue;
    answerOpenCalls(deps.journal, session, INTERRUPTED_RESULT);
    deps.journal.notice('info', `${open.sessionId}: answered ${open.toolUseIds.length} tool call(s) left open when Legion stopped ("interrupted")`, open.sessionId);
  }
}

/** The pending requests of a resumed batch and of the batches it waits on. */
function pendingIn(approvals: ApprovalQueue, point: ResumePoint): ApprovalRequest[] {
  const own = [...point.requests.values()].filter((r) => !approvals.get(r.requestId)?.outcome);
  return [...own, ...[...point.children.values()].flatMap((child) => pendingIn(approvals, child.point))];
}

export interface StartResumeDeps {
  readonly approvals: ApprovalQueue;
  readonly slots: Slots;
  readonly notice: Journal['notice'];
  readonly headless: boolean;
  enqueue(slot: SessionSlot, request: TurnRequest): boolean;
}

/** Start the resumed turns of the user's lanes (each takes its session's slot at once; messages sent to it queue behind). */
export function startResumes(deps: StartResumeDeps, resumes: readonly PlannedResume[]): void {
  for (const resume of resumes) {
    const slot = deps.slots.get(resume.sessionId);
    if (!slot) continue;
    const waiting = pendingIn(deps.approvals, resume.point);
    const askers = [...new Set(waiting.map((r) => r.participantId))].join(', ');
    const who = deps.headless ? 'are decided per --approve (headless run)' : 'wait for a decision in the approval queue';
    deps.notice('info', `${resume.agentId} resumes its turn in ${resume.sessionId}: ${waiting.length} approval request(s) of ${askers} from before the restart ${who}`, resume.sessionId);
    deps.enqueue(slot, {
      start: { kind: 'resume', point: resume.point },
      chain: [USER_ID, resume.agentId],
      sessionChain: [resume.sessionId],
      settle: () => undefined,
    });
  }
}

/**
 * At shutdown, before anything is aborted: the turns whose batch stays open on disk for the
 * next start. A turn waiting on its own pending requests (stage `approvals`) and every caller
 * above it that is running its batch and waiting on that very delegation (not detached), up
 * to a user's lane. Anything else is answered "interrupted" as the turns stop.
 */
export function turnsToLeaveOpen(askers: ReadonlyMap<string, Turn>, approvals: ApprovalQueue): Set<Turn> {
  const keep = new Set<Turn>();
  for (const [requestId, leaf] of askers) {
    if (leaf.stage !== 'approvals' || approvals.get(requestId)?.outcome) continue;
    const path = [leaf];
    let turn = leaf;
    let ok = true;
    while (turn.parent) {
      const link = turn.parent;
      if (link.detached || link.outcome || link.owner.finished || link.owner.stage !== 'running') {
        ok = false;
        break;
      }
      turn = link.owner;
      path.push(turn);
    }
    if (ok) for (const t of path) keep.add(t);
  }
  return keep;
}
