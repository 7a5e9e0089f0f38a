import type { TurnDeps } from '../runtime/agent-loop';
import type { ExecuteTool } from '../runtime/ports';
import type { StreamOnce } from '../runtime/stream';
import { journaledExecute, journaledStream, type DurableJournal } from './durable-steps';
import type { EventFeed } from './event-feed';
import type { DelegatedTurn } from '../runtime/delegation';
import type { TurnOutcome } from '../runtime/turn';
import { messageOf } from '../errors';
import * as restate from '@restatedev/restate-sdk';
import { turnOutcomeSchema } from './turn-messages';

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
  /** `sessionId`'s turn starts, its steps journaled in `journal`. */
  begin(runId: string, sessionId: string, journal: DurableJournal): void;
  end(sessionId: string): void;
  /** A request for the user in `sessionId`: wait for its decision on an awakeable of that session's turn (once per request). */
  awaitDecision(requestId: string, sessionId: string): void;
  /**
   * A delegation of the current turn as a durable call to the target session's object
   * (docs/engine.md#delegation). Never rejects: a callee that failed for good is a failed turn,
   * a cancelled one an interrupted turn. `signal` aborting (the caller's turn cancelled or
   * ended) cancels the callee, unless this attempt was lost: its replay waits on the same callee.
   */
  delegate(call: DelegatedTurn, signal: AbortSignal): Promise<TurnOutcome>;
  /** `action` as a step of the invocation of the nearest session of `sessionChain` that has one (delegation.ts `durableStep`). */
  step<T>(sessionChain: readonly string[], name: string, action: () => Promise<T>): Promise<T>;
  /** Where a decision goes (set once the core is built). */
  resolve?: (requestIds: string[], decision: RemoteDecision) => void;
}

interface LiveTurn {
  readonly runId: string;
  readonly journal: DurableJournal;
  readonly stream: StreamOnce;
  readonly execute: ExecuteTool;
  readonly awaited: Set<string>;
}

export function turnSteps(feed: EventFeed): TurnSteps {
  let base: { stream?: StreamOnce; execute?: ExecuteTool } = {};
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
  const steps: TurnSteps = {
    wrapTurn: (deps) => {
      base = { ...base, stream: deps.stream };
      return {
        ...deps,
        stream: async (turn, choice, context) => {
          const chain = turn.sessionChain;
          chains.set(turn.session.id, chain);
          return required(forChain(chain)).stream(turn, choice, context);
        },
      };
    },
    wrapExecute: (execute) => {
      base = { ...base, execute };
      return async (tool, input, context) => required(forSession(context.sessionId)).execute(tool, input, context);
    },
    begin: (runId, sessionId, journal) => {
      if (!base.stream || !base.execute) throw new Error('the core was built without its steps');
      live.set(sessionId, { runId, journal, stream: journaledStream(base.stream, journal), execute: journaledExecute(base.execute, journal), awaited: new Set() });
    },
    end: (sessionId) => {
      live.delete(sessionId);
      chains.delete(sessionId);
    },
    delegate: async (call, signal) => {
      // The caller is the session before the target's on the chain.
      const { runId, journal } = required(forChain(call.sessionChain.slice(0, -1)));
      const { sessionId, ...rest } = call;
      const pending = journal.call(sessionId, { runId, ...rest, chain: [...rest.chain], sessionChain: [...rest.sessionChain] });
      const cancel = (): void => {
        if (!journal.attemptEnded.aborted) pending.cancel();
      };
      signal.addEventListener('abort', cancel, { once: true });
      try {
        const parsed = turnOutcomeSchema.safeParse(await pending.result);
        return parsed.success ? parsed.data : { kind: 'failed', error: `${call.responderId} answered something that is not a turn outcome` };
      } catch (error) {
        if (error instanceof restate.CancelledError) return { kind: 'interrupted' };
        return { kind: 'failed', error: messageOf(error) };
      } finally {
        signal.removeEventListener('abort', cancel);
      }
    },
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
