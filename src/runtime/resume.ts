import { USER_ID } from '../collective/participant';
import { EXPIRED_REASON, type ApprovalRequest } from '../authz/approvals';
import { toolResultsOf, toolUsesOf, type Message } from '../model/message';
import { INTERRUPTED_RESULT } from '../model/repair';
import type { OpenCalls } from '../session/types';
import { sessionIdOf } from '../session/ids';
import { communicatorTarget, raisedFor, resumableChains, type ChainNode, type ResumeStage } from './resume-plan';
import type { Hub } from './hub';
import type { Turn } from './turn';
import { answerOpenCalls } from './agent-loop';
import { enqueue } from './scheduler';

/**
 * Pending approvals survive a restart (docs/design.md#authorization, issue 5). When Legion stops (quit or crash)
 * while a batch waits on approval requests, the batch stays open on disk; the next start
 * resumes it when its whole call chain can be rebuilt (see resume-plan.ts): the user's lane
 * `user → agent` directly, or through communicator calls (`user → ur-agent → scribe`) whose
 * callers' batches are open too.
 * - Stage `approvals` (the batch that asked): its calls never ran (calls run only once every
 *   request of the batch is decided). Each call is checked again, pending requests are
 *   re-offered under the same ids, decided ones keep their decision, then the batch runs.
 * - Stage `running` (a caller waiting on a delegation): its communicator call into the
 *   resumed session is re-attached to it (no new message is sent); other calls may have run
 *   before the stop: read-only ones run again, the others are answered "interrupted … may have
 *   taken effect" rather than repeated.
 * Everything else left open is answered "interrupted" and its requests expire, as before.
 */

/** Where a resumed turn starts again. */
export interface ResumePoint {
  /** The open assistant message (the last of the session). */
  readonly message: Message;
  readonly stage: ResumeStage;
  /** By tool_use id: the request raised for that call (still pending, or decided before the restart). */
  readonly requests: ReadonlyMap<string, ApprovalRequest>;
  /** Stage `running`: communicator tool_use id → the resumed turn it waits on. */
  readonly children: ReadonlyMap<string, ResumeChild>;
  /** Told to the agent with the batch's results (delegations the restart cut off). */
  readonly notes: readonly string[];
}

export interface ResumeChild {
  readonly sessionId: string;
  readonly agentId: string;
  readonly point: ResumePoint;
}

export interface PlannedResume {
  readonly sessionId: string;
  readonly agentId: string;
  readonly point: ResumePoint;
}

export interface ResumePlan {
  /** The user's lanes to resume (their chains below resume through them). */
  readonly resumes: PlannedResume[];
  /** Sessions the load kept open that will not resume: answer them (`answerDropped`). */
  readonly dropped: OpenCalls[];
  /** Every request (pending or decided) the resumed batches hold: not to expire. */
  readonly requestIds: ReadonlySet<string>;
}

/** Read-only tools: a resumed `running` batch runs them again (the others may have taken effect). */
export const READ_ONLY_TOOLS: ReadonlySet<string> = new Set(['file_read', 'file_list', 'glob', 'grep', 'list_participants', 'list_tools', 'todo_read']);

/** A resumed call whose stored input holds a scrubbed secret (see authz/scrub.ts) is not run with the placeholder. */
export const SECRET_NOT_KEPT = 'interrupted: Legion stopped while this call was pending, and its input held a secret value that is not kept on disk; ask again';

export const MAY_HAVE_RUN = 'interrupted: Legion stopped while this call was running; it may or may not have taken effect — check before doing it again';

/**
 * Which of the sessions the load kept open resume (after `approvals.load()`), as a tree per
 * user lane; the others are `dropped`.
 */
export function planResumes(hub: Hub, kept: readonly OpenCalls[]): ResumePlan {
  const { env } = hub;
  const isActiveAgent = (id: string): boolean => {
    const p = env.registry.get(id);
    return p?.kind === 'agent' && p.status === 'active';
  };
  const nodes = resumableChains(env.approvals.pending(), kept, isActiveAgent);
  const records = env.approvals.records();
  const resumed = new Set<string>();
  const requestIds = new Set<string>();

  const pointOf = (node: ChainNode): ResumePoint | null => {
    const messages = env.sessions.get(node.open.sessionId)?.messages() ?? [];
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
    const notes = lostDelegations(hub, node.open.key.responderId, messages, new Set([...nodes.keys(), ...own]));
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
  return { resumes, dropped: kept.filter((o) => !resumed.has(o.sessionId)), requestIds };
}

/**
 * Sessions the agent sent a message to during this turn (the delegations whose calls returned
 * early) that were cut off before replying (their last message is still the agent's or an
 * "interrupted" result): the communicator promised the agent their replies, which will not
 * come now.
 */
function lostDelegations(hub: Hub, agentId: string, messages: readonly Message[], kept: ReadonlySet<string>): string[] {
  let turnStart = '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user' && toolResultsOf(m).length === 0) {
      turnStart = m.at;
      break;
    }
  }
  const lost = hub.env.sessions.list().filter((s) => {
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

/** Answer the open calls of sessions kept open that will not resume ("interrupted"), with a notice. */
export function answerDropped(hub: Hub, dropped: readonly OpenCalls[]): void {
  for (const open of dropped) {
    const session = hub.env.sessions.get(open.sessionId);
    if (!session) continue;
    answerOpenCalls(hub, session, INTERRUPTED_RESULT);
    hub.notice('info', `${open.sessionId}: answered ${open.toolUseIds.length} tool call(s) left open when Legion stopped ("interrupted")`, open.sessionId);
  }
}

/** The pending requests of a resumed batch and of the batches it waits on. */
function pendingIn(hub: Hub, point: ResumePoint): ApprovalRequest[] {
  const own = [...point.requests.values()].filter((r) => !hub.env.approvals.get(r.requestId)?.outcome);
  return [...own, ...[...point.children.values()].flatMap((child) => pendingIn(hub, child.point))];
}

/** Start the resumed turns of the user's lanes (each takes its session's slot at once; messages sent to it queue behind). */
export function startResumes(hub: Hub, resumes: readonly PlannedResume[]): void {
  for (const resume of resumes) {
    const slot = hub.slot(resume.sessionId);
    if (!slot) continue;
    const waiting = pendingIn(hub, resume.point);
    const askers = [...new Set(waiting.map((r) => r.participantId))].join(', ');
    const who = hub.env.headless ? 'are decided per --approve (headless run)' : 'wait for a decision in the approval queue';
    hub.notice('info', `${resume.agentId} resumes its turn in ${resume.sessionId}: ${waiting.length} approval request(s) of ${askers} from before the restart ${who}`, resume.sessionId);
    enqueue(hub, slot, {
      text: '',
      chain: [USER_ID, resume.agentId],
      sessionChain: [resume.sessionId],
      resume: resume.point,
      settle: () => undefined,
    });
  }
}

/**
 * The communicator call `toolUseId` of a resumed batch re-attaches to the resumed turn of
 * `sessionId` instead of sending a new message (consumed once; see delegation.ts).
 */
export function takeReattach(hub: Hub, toolUseId: string, sessionId: string): ResumePoint | undefined {
  const child = hub.reattach.get(toolUseId);
  if (!child || child.sessionId !== sessionId) return undefined;
  hub.reattach.delete(toolUseId);
  return child.point;
}

/**
 * A resumed child that will not run after all (its caller was cancelled, or the call is now
 * refused): answer its open calls and those below it "interrupted", expire their requests.
 */
export function abandon(hub: Hub, child: ResumeChild): void {
  const session = hub.env.sessions.get(child.sessionId);
  if (session) answerOpenCalls(hub, session, INTERRUPTED_RESULT);
  const expired = hub.env.approvals.expire([...child.point.requests.values()].map((r) => r.requestId));
  for (const requestId of expired) auditExpired(hub, requestId);
  for (const below of child.point.children.values()) abandon(hub, below);
}

/** The audit line of a request that expired (its turn will not resume). */
export function auditExpired(hub: Hub, requestId: string): void {
  const request = hub.env.approvals.get(requestId)?.request;
  if (!request) return;
  hub.env.audit({
    sessionId: request.sessionId, participantId: request.participantId, chain: request.chain, toolName: request.toolName, input: request.input,
    decision: 'expired', decidedBy: 'cancel', ruleId: request.ruleId, reason: EXPIRED_REASON, requestId,
  });
}

/**
 * At shutdown, before anything is aborted: the turns whose batch stays open on disk for the
 * next start. A turn waiting on its own pending requests (stage `approvals`) and every caller
 * above it that is running its batch and waiting on that very delegation (not detached), up
 * to a user's lane. Anything else is answered "interrupted" as the turns stop.
 */
export function turnsToKeepOpen(hub: Hub): Set<Turn> {
  const keep = new Set<Turn>();
  for (const [requestId, leaf] of hub.askers) {
    if (leaf.stage !== 'approvals' || hub.env.approvals.get(requestId)?.outcome) continue;
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
