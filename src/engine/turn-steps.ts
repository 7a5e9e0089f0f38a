import type { TurnDeps } from '../runtime/agent-loop';
import type { ExecuteTool } from '../runtime/ports';
import type { StreamOnce } from '../runtime/stream';
import { journaledExecute, journaledStream, type DurableJournal } from './durable-steps';
import type { EventFeed } from './event-feed';
import type { DelegatedTurn } from '../runtime/delegation';
import type { TurnOutcome } from '../runtime/turn';
import { messageOf } from '../errors';
import * as restate from '@restatedev/restate-sdk';
import { turnOutcomeSchema } from './session-object';

/** A decision on a request that reached the user, as a hub resolves its awakeable. */
export interface RemoteDecision {
  readonly decision: 'approved' | 'rejected';
  readonly reason?: string;
  readonly allowForSession?: boolean;
  readonly by?: string;
}

/**
 * The durable steps of a worker's core, journaled in the turn it serves now
 * (docs/engine.md#a-turn-on-a-worker): a core kept between turns wraps its steps once, and each
 * turn `begin`s with its own journal, so step names (`model <session> <n>` counting from 1) and
 * awakeables belong to that turn's invocation alone. A step started outside a turn is refused.
 */
export interface TurnSteps {
  wrapTurn(deps: TurnDeps): TurnDeps;
  wrapExecute(execute: ExecuteTool): ExecuteTool;
  begin(runId: string, journal: DurableJournal): void;
  end(): void;
  /** A request for the user: wait for its decision on an awakeable of the current turn (once per request). */
  awaitDecision(requestId: string): void;
  /**
   * A delegation of the current turn as a durable call to the target session's object
   * (docs/engine.md#delegation). Never rejects: a callee that failed for good is a failed turn,
   * a cancelled one an interrupted turn. `signal` aborting (the caller's turn cancelled or
   * ended) cancels the callee, unless this attempt was lost: its replay waits on the same callee.
   */
  delegate(call: DelegatedTurn, signal: AbortSignal): Promise<TurnOutcome>;
  /** Where a decision goes (set once the core is built). */
  resolve?: (requestIds: string[], decision: RemoteDecision) => void;
}

export function turnSteps(feed: EventFeed): TurnSteps {
  let base: { stream?: StreamOnce; execute?: ExecuteTool } = {};
  let current: { runId: string; journal: DurableJournal; stream: StreamOnce; execute: ExecuteTool; awaited: Set<string> } | undefined;
  const now = (): NonNullable<typeof current> => {
    if (!current) throw new Error('a durable step outside a turn');
    return current;
  };
  const steps: TurnSteps = {
    wrapTurn: (deps) => {
      base = { ...base, stream: deps.stream };
      return { ...deps, stream: async (turn, choice, context) => now().stream(turn, choice, context) };
    },
    wrapExecute: (execute) => {
      base = { ...base, execute };
      return async (tool, input, context) => now().execute(tool, input, context);
    },
    begin: (runId, journal) => {
      if (!base.stream || !base.execute) throw new Error('the core was built without its steps');
      current = { runId, journal, stream: journaledStream(base.stream, journal), execute: journaledExecute(base.execute, journal), awaited: new Set() };
    },
    end: () => {
      current = undefined;
    },
    delegate: async (call, signal) => {
      const { journal } = now();
      const { sessionId, ...rest } = call;
      const pending = journal.call(sessionId, { runId: now().runId, ...rest, chain: [...rest.chain], sessionChain: [...rest.sessionChain] });
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
    awaitDecision: (requestId) => {
      const turn = current;
      if (!turn || turn.awaited.has(requestId)) return;
      turn.awaited.add(requestId);
      const decision = turn.journal.awakeable<RemoteDecision>();
      feed.publishAwakeable(turn.runId, requestId, decision.id);
      void decision.promise.then((d) => steps.resolve?.([requestId], d), () => undefined);
    },
  };
  return steps;
}
