import { USER_ID } from '../collective/participant';
import type { ApprovalRequest } from '../authz/approvals';
import { toolResultsOf, toolUsesOf, type Message } from '../model/message';
import { INTERRUPTED_RESULT } from '../model/repair';
import type { OpenCalls } from '../session/types';
import type { Hub } from './hub';
import { answerOpenCalls } from './agent-loop';
import { enqueue } from './scheduler';

/**
 * Pending approvals survive a restart (DESIGN §7, issue 5). A turn can resume when its session
 * is the user's lane (`user → agent`: no caller whose communicator call died with the process),
 * its last message is the assistant's tool-call message with no results yet, and at least one
 * call of that message has a request still pending in approvals.jsonl. Such a batch never
 * reached its run phase (calls run only once every request of the batch is decided), so none
 * of its calls ran: resuming re-checks each call, re-offers the pending requests under the same
 * ids, runs what is approved or allowed, answers the rest, and the agent loop goes on.
 * Everything else left open (nested turns, batches interrupted while running) is answered
 * "interrupted" and its requests expire, as before.
 */

/** Where a resumed turn starts again. */
export interface ResumePoint {
  /** The open assistant message (the last of the session). */
  readonly message: Message;
  /** By tool_use id: the request raised for that call (still pending, or decided before the restart). */
  readonly requests: ReadonlyMap<string, ApprovalRequest>;
  /** Told to the agent with the batch's results (delegations the restart cut off). */
  readonly notes: readonly string[];
}

export interface PlannedResume {
  readonly sessionId: string;
  readonly agentId: string;
  readonly point: ResumePoint;
}

/** Was `request` raised by the responder of `open` for one of its open calls, on the chain `user → agent`? */
function raisedFor(request: ApprovalRequest, open: OpenCalls): boolean {
  const agentId = open.key.responderId;
  return request.sessionId === open.sessionId && request.participantId === agentId && open.toolUseIds.includes(request.toolUseId)
    && request.chain.length === 2 && request.chain[0] === USER_ID && request.chain[1] === agentId;
}

/**
 * The `keepOpen` predicate for `RunStore.load`, from the requests pending in approvals.jsonl
 * (`readPendingApprovals`): keep a session open only when the core will resume its turn.
 */
export function keepOpenFor(pending: readonly ApprovalRequest[], isActiveAgent: (id: string) => boolean): (open: OpenCalls) => boolean {
  return (open) => open.key.initiatorId === USER_ID && isActiveAgent(open.key.responderId) && pending.some((r) => raisedFor(r, open));
}

/**
 * Which of the sessions the load kept open resume (after `approvals.load()`); the others are
 * returned in `dropped` (their open calls must be answered, see `answerDropped`).
 */
export function planResumes(hub: Hub, kept: readonly OpenCalls[]): { resumes: PlannedResume[]; dropped: OpenCalls[] } {
  const { env } = hub;
  const records = env.approvals.records();
  const resumes: PlannedResume[] = [];
  const dropped: OpenCalls[] = [];
  for (const open of kept) {
    const session = env.sessions.get(open.sessionId);
    const messages = session?.messages() ?? [];
    const last = messages[messages.length - 1];
    const agent = env.registry.get(open.key.responderId);
    const requests = new Map<string, ApprovalRequest>();
    for (const record of records) if (raisedFor(record.request, open)) requests.set(record.request.toolUseId, record.request);
    const waiting = [...requests.values()].some((r) => !env.approvals.get(r.requestId)?.outcome);
    const usable = open.key.initiatorId === USER_ID && agent?.kind === 'agent' && agent.status === 'active'
      && last?.role === 'assistant' && toolUsesOf(last).length > 0;
    if (!usable || !waiting || !last) {
      dropped.push(open);
      continue;
    }
    resumes.push({ sessionId: open.sessionId, agentId: agent.id, point: { message: last, requests, notes: lostDelegations(hub, agent.id, messages) } });
  }
  return { resumes, dropped };
}

/**
 * Sessions the agent sent messages to during this turn that were cut off before replying
 * (their last message is still the agent's or an "interrupted" result): the communicator
 * promised the agent their replies, which will not come now.
 */
function lostDelegations(hub: Hub, agentId: string, messages: readonly Message[]): string[] {
  let turnStart = '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user' && toolResultsOf(m).length === 0) {
      turnStart = m.at;
      break;
    }
  }
  const lost = hub.env.sessions.list().filter((s) => {
    if (s.key.initiatorId !== agentId || s.key.responderId === USER_ID) return false;
    const all = s.messages();
    const end = all[all.length - 1];
    return end !== undefined && end.role === 'user' && end.at >= turnStart;
  });
  if (lost.length === 0) return [];
  return [`[Legion restarted while your tool calls waited for approval. These sessions had not replied yet and were interrupted: ${lost.map((s) => s.id).join(', ')}. Ask again if you still need their replies.]`];
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

/** Start the resumed turns (each takes its session's turn slot at once; messages sent to it queue behind). */
export function startResumes(hub: Hub, resumes: readonly PlannedResume[]): void {
  for (const resume of resumes) {
    const slot = hub.slot(resume.sessionId);
    if (!slot) continue;
    const waiting = [...resume.point.requests.values()].filter((r) => !hub.env.approvals.get(r.requestId)?.outcome).length;
    const who = hub.env.headless ? 'are decided per --approve (headless run)' : 'wait for a decision in the approval queue';
    hub.notice('info', `${resume.agentId} resumes its turn in ${resume.sessionId}: ${waiting} approval request(s) from before the restart ${who}`, resume.sessionId);
    enqueue(hub, slot, {
      text: '',
      chain: [USER_ID, resume.agentId],
      sessionChain: [resume.sessionId],
      resume: resume.point,
      settle: () => undefined,
    });
  }
}
