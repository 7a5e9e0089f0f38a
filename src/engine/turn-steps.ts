import type { TurnDeps } from '../runtime/agent-loop';
import type { ExecuteTool } from '../runtime/ports';
import type { StreamOnce } from '../runtime/stream';
import { journaledAsks, journaledExecute, journaledStream, type DurableJournal, type SentAnswer, type ToolFences } from './durable-steps';
import type { DecideAsks } from '../runtime/approval-phase';
import type { EventFeed } from './event-feed';
import type { DelegatedTurn } from '../runtime/delegation';
import type { TurnOutcome } from '../runtime/turn';
import { messageOf } from '../errors';
import * as restate from '@restatedev/restate-sdk';
import { mailItemSchema, remoteAnswerSchema, turnOutcomeSchema, type TurnInput } from './turn-messages';
import type { ApprovalsAcross, RemoteAnswer } from '../runtime/ports';
import type { ApprovalRequest } from '../authz/approvals';

/** A decision on a request that reached the user, as a hub resolves its awakeable. */
export interface RemoteDecision {
  readonly decision: 'approved' | 'rejected';
  readonly reason?: string;
  readonly allowForSession?: boolean;
  readonly by?: string;
}

/**
 * The durable steps of a worker's core, journaled in the turns it serves now
 * (docs/engine.md#a-turn-on-a-worker): a core kept between turns wraps its steps once, and each
 * turn `begin`s with its own journal, so step names (`model <session> <n>` counting from 1) and
 * awakeables belong to that turn's invocation alone. Turns of several sessions may run in one
 * core at once, each in its own invocation: a step goes to the journal of its session's turn, or,
 * for a delegated turn run inside its caller's invocation, of the nearest session up its chain
 * that has one. A step with none is refused.
 */
export interface TurnSteps {
  wrapTurn(deps: TurnDeps): TurnDeps;
  wrapExecute(execute: ExecuteTool): ExecuteTool;
  /** `sessionId`'s turn starts, its steps journaled in `journal`; `upstream`: its input's callers that decide approvals. */
  begin(runId: string, sessionId: string, journal: DurableJournal, upstream?: TurnInput['upstream']): void;
  end(sessionId: string): void;
  /** A request for the user in `sessionId`: wait for its decision on an awakeable of that session's turn (once per request). */
  awaitDecision(requestId: string, sessionId: string): void;
  /**
   * A delegation of the current turn as a durable call to the target session's object
   * (docs/engine.md#delegation). Never rejects: a callee that failed for good is a failed turn,
   * a cancelled one an interrupted turn. `signal` aborting (the caller's turn cancelled or
   * ended) cancels the callee, unless this attempt was lost: its replay waits on the same callee.
   * With `deliver` the caller takes the callee's requests for its agent through a mailbox, and the
   * outcome and those requests are looked for when `poll` is called
   * (docs/engine.md#approvals-across-objects).
   */
  delegate(call: DelegatedTurn, signal: AbortSignal, deliver?: (request: ApprovalRequest) => void): { readonly outcome: Promise<TurnOutcome>; readonly poll?: () => void };
  /** Approval requests between the invocations of a chain (the core's `approvalsAcross`). */
  readonly across: ApprovalsAcross;
  /** `action` as a step of the invocation of the nearest session of `sessionChain` that has one (delegation.ts `durableStep`). */
  step<T>(sessionChain: readonly string[], name: string, action: () => Promise<T>): Promise<T>;
  /** Where a decision goes (set once the core is built). */
  resolve?: (requestIds: string[], decision: RemoteDecision) => void;
}

interface LiveTurn {
  readonly runId: string;
  readonly journal: DurableJournal;
  readonly stream: StreamOnce;
  readonly decideAsks: DecideAsks;
  readonly execute: ExecuteTool;
  readonly awaited: Set<string>;
  /** The callers up the chain that decide approvals, with their mailboxes (the turn's input). */
  readonly upstream: NonNullable<TurnInput['upstream']>;
  /** Calls with a mailbox made, requests sent up: counted per invocation (mailbox keys, step names). */
  mailboxes: number;
  sentUp: number;
}

/** A request a delegate elsewhere sent to an agent of this core, until answered. */
interface Held {
  readonly request: ApprovalRequest;
  readonly awakeable: string;
  readonly journal: DurableJournal;
  answered: boolean;
}

const settled = (raw: unknown, responderId: string): TurnOutcome => {
  const parsed = turnOutcomeSchema.safeParse(raw);
  return parsed.success ? parsed.data : { kind: 'failed', error: `${responderId} answered something that is not a turn outcome` };
};
const failedCall = (error: unknown): TurnOutcome =>
  error instanceof restate.CancelledError ? { kind: 'interrupted' } : { kind: 'failed', error: messageOf(error) };

export function turnSteps(feed: EventFeed): TurnSteps {
  let base: { stream?: StreamOnce; decideAsks?: DecideAsks; execute?: ExecuteTool } = {};
  // The turns running now, by the session whose invocation each is.
  const live = new Map<string, LiveTurn>();
  // Each session's chain as its last model call saw it (a tool runs after the call that asked for it).
  const chains = new Map<string, readonly string[]>();
  const forChain = (sessionChain: readonly string[]): LiveTurn | undefined => {
    for (let i = sessionChain.length - 1; i >= 0; i--) {
      const turn = live.get(sessionChain[i]!);
      if (turn) return turn;
    }
    return undefined;
  };
  const forSession = (sessionId: string): LiveTurn | undefined => live.get(sessionId) ?? forChain(chains.get(sessionId) ?? []);
  const required = (turn: LiveTurn | undefined): LiveTurn => {
    if (!turn) throw new Error('a durable step outside a turn');
    return turn;
  };
  // Requests delegates elsewhere sent to this core's agents, by request id; answers made by tool
  // calls, sent once their step is journaled (durable-steps.ts `ToolAnswers`).
  const held = new Map<string, Held>();
  const answersOf = new Map<string, SentAnswer[]>();
  const toolAnswers = {
    take: (toolUseId: string): SentAnswer[] => {
      const out = answersOf.get(toolUseId) ?? [];
      answersOf.delete(toolUseId);
      return out;
    },
    sent: (answer: SentAnswer): void => {
      for (const h of held.values()) if (h.awakeable === answer.awakeable) h.answered = true;
    },
  };
  const across: ApprovalsAcross = {
    upstream: (asker, request, handlers) => {
      let top = asker;
      while (top.parent) top = top.parent.owner;
      const turn = live.get(top.session.id);
      const link = turn && [...turn.upstream].reverse().find((l) => l.participantId === request.approverId);
      if (!turn || !link) return false;
      const decision = turn.journal.awakeableLater<unknown>();
      const n = ++turn.sentUp;
      // Recorded first: a replay raises the request under a new id, and must post what the first attempt posted.
      void turn.journal.run(`approval-up ${n}`, async () => ({ awakeable: decision.id, request: { ...request } }))
        .then(async (item) => {
          turn.journal.post(link.mailbox, item);
          if (item.request.requestId !== request.requestId) handlers.superseded(item.request.requestId);
          const answer = remoteAnswerSchema.safeParse(await decision.wait());
          // A malformed answer decides nothing: the request climbs.
          handlers.answered(answer.success ? answer.data as RemoteAnswer : { kind: 'climb' });
        })
        .catch(() => undefined); // the turn cancelled or its attempt lost: nothing to apply
      return true;
    },
    held: (requestId) => {
      const h = held.get(requestId);
      return h && !h.answered ? h.request : undefined;
    },
    knows: (requestId) => held.has(requestId),
    decide: (requestId, answer, toolUseId) => {
      const h = held.get(requestId);
      if (!h || h.answered) return;
      h.answered = true;
      answersOf.set(toolUseId, [...(answersOf.get(toolUseId) ?? []), { awakeable: h.awakeable, answer }]);
    },
    climb: (requestId) => {
      const h = held.get(requestId);
      if (!h || h.answered) return;
      h.answered = true;
      h.journal.resolveAwakeable(h.awakeable, { kind: 'climb' } satisfies RemoteAnswer);
    },
  };
  const steps: TurnSteps = {
    wrapTurn: (deps) => {
      base = { ...base, stream: deps.stream, decideAsks: deps.decideAsks };
      return {
        ...deps,
        stream: async (turn, choice, context) => {
          const chain = turn.sessionChain;
          chains.set(turn.session.id, chain);
          return required(forChain(chain)).stream(turn, choice, context);
        },
        // A batch's decisions follow its model call: the turn the call was journaled in.
        decideAsks: async (turn, batch) => required(forChain(turn.sessionChain)).decideAsks(turn, batch),
      };
    },
    wrapExecute: (execute) => {
      base = { ...base, execute };
      return async (tool, input, context) => required(forSession(context.sessionId)).execute(tool, input, context);
    },
    begin: (runId, sessionId, journal, upstream = []) => {
      if (!base.stream || !base.decideAsks || !base.execute) throw new Error('the core was built without its steps');
      // What vouches for each tool call's start, from this invocation's journal (durable-steps.ts).
      const fences: ToolFences = new Map();
      live.set(sessionId, {
        runId, journal, stream: journaledStream(base.stream, journal, fences), decideAsks: journaledAsks(base.decideAsks, journal, fences),
        execute: journaledExecute(base.execute, journal, toolAnswers, fences), awaited: new Set(),
        upstream, mailboxes: 0, sentUp: 0,
      });
    },
    end: (sessionId) => {
      live.delete(sessionId);
      chains.delete(sessionId);
    },
    delegate: (call, signal, deliver) => {
      // The caller is the session before the target's on the chain.
      const owner = required(forChain(call.sessionChain.slice(0, -1)));
      const { runId, journal } = owner;
      const { sessionId, ...rest } = call;
      const mailbox = deliver ? `${journal.invocationId}/${++owner.mailboxes}` : undefined;
      const upstream = [...owner.upstream, ...(mailbox ? [{ participantId: call.initiatorId, mailbox }] : [])];
      const input = { runId, ...rest, chain: [...rest.chain], sessionChain: [...rest.sessionChain], ...(upstream.length > 0 ? { upstream } : {}) };
      const watchCancel = (cancelCallee: () => void): (() => void) => {
        const cancel = (): void => {
          if (!journal.attemptEnded.aborted) cancelCallee();
        };
        signal.addEventListener('abort', cancel, { once: true });
        return () => signal.removeEventListener('abort', cancel);
      };
      if (!mailbox || !deliver) {
        const pending = journal.call(sessionId, input);
        const unwatch = watchCancel(() => pending.cancel());
        const outcome = pending.result.then((raw) => settled(raw, call.responderId), failedCall).finally(unwatch);
        return { outcome };
      }
      const pending = journal.callWithMailbox(sessionId, input, mailbox);
      const unwatch = watchCancel(() => pending.cancel());
      let done!: (outcome: TurnOutcome) => void;
      const outcome = new Promise<TurnOutcome>((resolve) => { done = resolve; });
      const mine = new Set<string>();
      const finish = (result: TurnOutcome): void => {
        unwatch();
        // What it sent and nobody answered was withdrawn with its turn (kept, answered: never decided here).
        for (const requestId of mine) held.get(requestId)!.answered = true;
        done(result);
      };
      let polling = false;
      let over = false;
      const poll = (): void => {
        if (polling || over) return;
        polling = true;
        pending.next().then((news) => {
          polling = false;
          if ('outcome' in news) {
            over = true;
            return finish(settled(news.outcome, call.responderId));
          }
          for (const raw of Array.isArray(news.items) ? news.items : []) {
            const item = mailItemSchema.safeParse(raw);
            if (!item.success) continue; // not a request: nothing to decide
            const request = item.data.request as ApprovalRequest;
            if (held.has(request.requestId)) continue;
            held.set(request.requestId, { request, awakeable: item.data.awakeable, journal, answered: false });
            mine.add(request.requestId);
            deliver(request);
          }
        }, (error: unknown) => {
          polling = false;
          over = true;
          finish(failedCall(error));
        });
      };
      return { outcome, poll };
    },
    across,
    step: (sessionChain, name, action) => required(forChain(sessionChain)).journal.run(name, action),
    awaitDecision: (requestId, sessionId) => {
      const turn = forSession(sessionId);
      if (!turn || turn.awaited.has(requestId)) return;
      turn.awaited.add(requestId);
      const decision = turn.journal.awakeable<RemoteDecision>();
      feed.publishAwakeable(turn.runId, requestId, decision.id);
      void decision.promise.then((d) => steps.resolve?.([requestId], d), () => undefined);
    },
  };
  return steps;
}
