import type { ToolContext, ToolResult, ToolCatalog } from '../tools/types';
import type { CollectiveRegistry } from '../collective/registry';
import type { CommunicateInput } from '../collective/tools/deps';
import { checkSessionName, DEFAULT_SESSION_NAME, sessionIdOf } from '../session/ids';
import type { ResumeChild } from './call-state';
import type { Journal } from './journal';
import type { IsolationPrepared } from '../model/isolation';
import type { Router } from './approval-route';
import type { ApprovalRequest } from '../authz/approvals';
import type { Slots } from './run-state';
import { Delegation, nextNews, type SessionSlot, type Turn, type TurnOutcome, type TurnRequest } from './turn';
import { approvalsBlock, firstLine, outcomeText } from './format';
import { RESOLVE_APPROVAL_TOOL } from '../authz/approver';


/**
 * A delegated turn as another invocation runs it (engine mode, docs/engine.md#delegation): the
 * target's session, the message, and the chain the target's core needs for its own checks
 * (the depth cap, re-entry, the approvers' ladder).
 */
export interface DelegatedTurn {
  readonly sessionId: string;
  readonly initiatorId: string;
  readonly responderId: string;
  readonly name: string;
  readonly text: string;
  /** Participants along the call chain, outermost first, ending with the responder. */
  readonly chain: readonly string[];
  /** Session ids along the call chain, ending with the target's (the re-entry check). */
  readonly sessionChain: readonly string[];
}

/** The communicator, and the news of detached delegations a turn collects. */
export interface Communicator {
  communicate(context: ToolContext, input: CommunicateInput): Promise<ToolResult>;
  /** See `collectNews` below (the `collect news` step of a turn). */
  collectNews(turn: Turn, atEnd: boolean): Promise<string[]>;
}

export interface CommunicatorDeps {
  readonly registry: CollectiveRegistry;
  readonly tools: ToolCatalog;
  readonly maxDepth: number;
  readonly slots: Slots;
  /** The resumed turn a communicator call of a resumed batch re-attaches to, taken once (resume-prepass.ts). */
  takeResumedChild(toolUseId: string, sessionId: string): ResumeChild | undefined;
  readonly setStatus: Journal['setStatus'];
  readonly router: Pick<Router, 'climb' | 'undecided'>;
  /** Queue a turn (the scheduler's `enqueue`, passed in: the scheduler sits above). */
  enqueue(slot: SessionSlot, request: TurnRequest): boolean;
  /** An agent asks the user (user-questions.ts). */
  askUser(turn: Turn, context: ToolContext, name: string, text: string): Promise<ToolResult>;
  /** `isolation.default` of the config. */
  readonly isolationDefault: 'worktree' | 'none';
  /** Make an isolated session's worktree ready (merge-request.ts `prepare`, passed in); the note tells the agent where it works. */
  prepareIsolation?(sessionId: string, participantId: string, requested: 'worktree' | 'none'): Promise<IsolationPrepared>;
  /**
   * Engine mode (docs/engine.md#delegation): run the target's turn as a durable call to its
   * session's object, not in this core (every delegation but a call of a batch resumed after a
   * restart). `outcome` never rejects; `signal` aborting cancels the call. With `deliver` (the
   * caller's agent decides approvals), approval requests raised below for it come back through
   * `deliver`, and the outcome and those requests are looked for when `poll` is called (the
   * caller waits for news, turn.ts `nextNews`; docs/engine.md#approvals-across-objects).
   */
  delegateElsewhere?(call: DelegatedTurn, signal: AbortSignal, deliver?: (request: ApprovalRequest) => void): { readonly outcome: Promise<TurnOutcome>; readonly poll?: () => void };
  /**
   * Engine mode: run `action` as a journaled step of the invocation that runs the caller's turn
   * (`callerChain`: the caller's session chain), named `name`: a replay of the caller returns the
   * recorded result instead of acting again. Used for what a delegation does in the caller's core
   * before the call (preparing the target's worktree, docs/engine.md#delegation).
   */
  durableStep?<T>(callerChain: readonly string[], name: string, action: () => Promise<T>): Promise<T>;
}

/**
 * Whether the agent of a turn can decide approval requests (it holds `resolve_approval` and some
 * `approvalAuthority`): a request raised below may then be for it, delivered to its waiting
 * communicator call (approval-route.ts; in engine mode through the engine,
 * docs/engine.md#approvals-across-objects).
 */
export function decidesApprovals(registry: CollectiveRegistry, id: string): boolean {
  const p = registry.get(id);
  return p?.kind === 'agent' && p.tools.includes(RESOLVE_APPROVAL_TOOL) && (p.approvalAuthority === '*' || p.approvalAuthority.length > 0);
}

const fail = (content: string): ToolResult => ({ content, isError: true });

const hasNewsForOwner = (turn: Turn): boolean => {
  for (const d of turn.delegations) if (d.inbox.length > 0) return true;
  return false;
};

export function createCommunicator(deps: CommunicatorDeps): Communicator {
  const { registry, tools, slots, router } = deps;

  /** The running turn that made a tool call (one turn at a time per session). */
  const callerTurn = (context: ToolContext): Turn | undefined => {
    const turn = slots.get(context.sessionId)?.running;
    return turn && turn.agent.id === context.participantId ? turn : undefined;
  };

  /**
   * The communicator (docs/design.md#participants-sessions-runs): send `message` from the calling agent to `targetId` in
   * session `session-{caller}__{target}__{name}` and wait for the target's final text.
   * Refused with an error result: unknown or retired target, the depth cap, re-entering a
   * session already on the call chain (it would wait on itself), a second message to a
   * session still working on this turn's previous one. When approval requests for the
   * caller arrive from below, the call returns early listing them (the reply is delivered
   * later, see `collectNews`).
   */
  const communicate = async (context: ToolContext, input: CommunicateInput): Promise<ToolResult> => {
    const turn = callerTurn(context);
    if (!turn) return fail('communicator: no running turn for this call');
    const name = input.sessionName ?? DEFAULT_SESSION_NAME;
    const nameProblem = checkSessionName(name);
    if (nameProblem) return fail(nameProblem);
    const callerId = turn.agent.id;
    if (input.targetId === callerId) return fail('you cannot send a message to yourself');
    const target = registry.get(input.targetId);
    if (!target) return fail(`no participant "${input.targetId}"; see list_participants`);
    if (target.status !== 'active') return fail(`${target.id} is retired and takes no messages`);
    if (target.kind === 'user') return deps.askUser(turn, context, name, input.message);

    const chain = [...turn.chain, target.id];
    const depth = chain.length - 1;
    if (depth > deps.maxDepth) {
      return fail(`depth cap reached: ${chain.join(' → ')} would be ${depth} levels deep (runtime.maxDepth is ${deps.maxDepth}); do this part yourself or report back to your caller`);
    }
    const key = { initiatorId: callerId, responderId: target.id, name };
    const sessionId = sessionIdOf(key);
    if (turn.sessionChain.includes(sessionId)) {
      return fail(`refused: ${sessionId} is already waiting on this call chain (${turn.sessionChain.join(' → ')}); a message there would wait on itself. Answer your caller instead, or use another sessionName.`);
    }
    for (const d of turn.delegations) {
      if (d.sessionId === sessionId) return fail(`${target.id} is still working on your previous message in session "${name}"; its reply will be delivered to you when it finishes`);
    }

    // A call of a batch resumed after a restart re-attaches to the target's resumed turn (resume-prepass.ts).
    const child = deps.takeResumedChild(context.toolUseId, sessionId);
    const delegation = new Delegation(turn, sessionId, target.id);
    turn.delegations.add(delegation); // before the await below: a second call to this session is refused above
    let text = input.message;
    const requested = input.isolation ?? target.isolation ?? deps.isolationDefault;
    if (!child) {
      const prepare = async (): Promise<IsolationPrepared> => deps.prepareIsolation
        ? deps.prepareIsolation(sessionId, target.id, requested)
        : requested === 'worktree' ? { ok: false, kind: 'failed', error: 'refused: worktree isolation is not available in this run' } : { ok: true, note: '' };
      // Preparing a worktree changes it (made, refreshed, rebased) and its note goes into the
      // message: in engine mode a step of the caller's invocation, so a replay neither prepares
      // again nor sends a different message.
      const prepared = requested === 'worktree' && deps.durableStep
        ? await deps.durableStep(turn.sessionChain, `isolate ${sessionId}`, prepare)
        : await prepare();
      if (!prepared.ok) {
        turn.delegations.delete(delegation);
        return fail(prepared.error);
      }
      if (prepared.note) text = `${prepared.note}\n\n${input.message}`;
    }

    const sessionChain = [...turn.sessionChain, sessionId];
    if (deps.delegateElsewhere && !child) {
      const call = { sessionId, initiatorId: callerId, responderId: target.id, name, text, chain, sessionChain };
      const deliver = decidesApprovals(registry, callerId) ? (request: ApprovalRequest): void => delegation.deliver(request) : undefined;
      const elsewhere = deps.delegateElsewhere(call, turn.controller.signal, deliver);
      if (elsewhere.poll) delegation.poll = elsewhere.poll;
      void elsewhere.outcome.then((outcome) => delegation.settle(outcome));
    } else {
      const { slot } = slots.open(key);
      deps.enqueue(slot, {
        start: child ? { kind: 'resume', point: child.point } : { kind: 'message', text },
        chain,
        sessionChain,
        parent: delegation,
        signal: turn.controller.signal,
        settle: (outcome) => delegation.settle(outcome),
      });
    }

    for (;;) {
      if (delegation.outcome) {
        turn.delegations.delete(delegation);
        const { content, isError } = outcomeText(target.id, delegation.outcome);
        const failure = delegation.outcome.kind === 'interrupted' ? 'interrupted' : 'failed';
        return { content, isError, summary: `${target.id}: ${firstLine(content, 80)}`, ...(isError ? { failure } : {}) };
      }
      if (context.signal.aborted) {
        turn.delegations.delete(delegation);
        return { content: `interrupted by the user while waiting on ${target.id}`, isError: true, failure: 'interrupted' };
      }
      if (hasNewsForOwner(turn)) {
        delegation.detached = true;
        const requests = delegation.inbox.splice(0);
        const waiting = requests.length > 0
          ? approvalsBlock(tools, requests)
          : 'It is still working; meanwhile another delegation needs your decision.';
        return {
          content: `${target.id} has not finished yet (session "${name}").\n${waiting}\n${target.id}'s reply will be delivered to you in a later message when it finishes.`,
          summary: requests.length > 0 ? `${target.id} waits for ${requests.length} approval${requests.length > 1 ? 's' : ''}` : `${target.id} still working`,
        };
      }
      await nextNews(turn, context.signal);
    }
  };

  /**
   * After a tool batch (`atEnd` false) or when the model ended its turn (`atEnd` true):
   * gather news of detached delegations as notes for the agent — replies that arrived and
   * approval requests for it. With nothing new: return at once when the agent still has
   * requests to decide (mid-turn), else wait; at the turn's end, undecided requests first
   * climb to the next approver, so nothing waits on an agent that stopped answering.
   */
  const collectNews = async (turn: Turn, atEnd: boolean): Promise<string[]> => {
    if (turn.delegations.size === 0) return [];
    const signal = turn.controller.signal;
    for (;;) {
      const notes: string[] = [];
      for (const d of [...turn.delegations]) {
        if (d.inbox.length > 0) notes.push(`[from ${d.targetId}, session ${d.sessionId}]\n${approvalsBlock(tools, d.inbox.splice(0))}`);
        if (d.outcome) {
          turn.delegations.delete(d);
          notes.push(`[reply from ${d.targetId}, session ${d.sessionId}]\n${outcomeText(d.targetId, d.outcome).content}`);
        }
      }
      if (notes.length > 0 || turn.delegations.size === 0) return notes;
      const open = router.undecided(turn);
      if (open.length > 0) {
        if (!atEnd) return [];
        for (const request of open) router.climb(request);
      }
      deps.setStatus(turn.slot, 'running-tool', `waiting on ${[...turn.delegations].map((d) => d.targetId).join(', ')}`);
      await nextNews(turn, signal);
      if (signal.aborted) return [];
    }
  };

  return { communicate, collectNews };
}
