import { randomUUID } from 'node:crypto';
import * as restate from '@restatedev/restate-sdk';
import type { TurnOutcome } from '../runtime/turn';
import { MODEL_STEP, type DurableJournal } from './durable-steps';
import { turnInputSchema, turnOutcomeSchema, type TurnInput } from './turn-messages';
import { MAILBOX_OBJECT } from './mailbox';
import { invocationDriver, type Operation } from './invocation-driver';
import { startStep, type StepContext } from './step-start';

/** The name Legion's session object is registered under; a session id is its key. */
export const SESSION_OBJECT = 'LegionSession';

/** Runs one turn on this worker for `sessionId`, its steps journaled in `journal`. */
export type RunTurnOnWorker = (input: TurnInput, sessionId: string, journal: DurableJournal) => Promise<TurnOutcome>;

/** A failure of the request itself: the turn cannot run, retrying would not help. */
export class TurnRefused extends Error {}

/**
 * Retries of a turn whose worker died or failed (docs/engine.md#running-it): the first after
 * 200 ms, doubling up to 2 s between attempts. A turn may wait on a model or a tool for long
 * without a journal entry, so inactivity is allowed for an hour before Restate asks it to stop.
 */
export const TURN_RETRY = { initialInterval: 200, exponentiationFactor: 2, maxInterval: 2000 } as const;
const INACTIVITY_MS = 60 * 60 * 1000;

/** The header a hub names its turn with, so it can take the outcome off the worker's feed (docs/engine.md#streaming-and-the-hub). */
export const TURN_HEADER = 'x-legion-turn';

/** A turn sent by a hub ended on this worker, every step of it journaled: `turnId` is its TURN_HEADER. */
export type TurnSettled = (input: TurnInput, sessionId: string, turnId: string, outcome: TurnOutcome) => void;

/**
 * The session as a Restate virtual object: `turn` is exclusive (Restate queues a session's
 * turns), and each execution of it gets a fresh attempt id for its journaled steps. `settled`
 * hears the outcome of a turn that carries TURN_HEADER as soon as the turn has it, before the
 * engine records it: every step is journaled by then, so a replay reaches the same outcome.
 */
export function sessionObject(runTurn: RunTurnOnWorker, settled?: TurnSettled) {
  return restate.object({
    name: SESSION_OBJECT,
    handlers: {
      turn: async (ctx: restate.ObjectContext, raw: unknown): Promise<TurnOutcome> => {
        const parsed = turnInputSchema.safeParse(raw);
        if (!parsed.success) throw new restate.TerminalError(`bad turn request: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
        const cancel = new AbortController();
        const watch = <T>(promise: PromiseLike<T>): Promise<T> => Promise.resolve(promise).catch((error: unknown) => {
          if (error instanceof restate.CancelledError) cancel.abort();
          throw error;
        });
        // The SDK drives one awaited promise per invocation: every promise the turn issues goes
        // through one driver, which awaits them as races the journal fixes (invocation-driver.ts).
        const driver = invocationDriver(ctx);
        const one = <T>(promise: restate.RestatePromise<T>, operation?: Operation): Promise<T> => driver.track([promise], operation)[0] as Promise<T>;
        // A call's id: the SDK types it a Promise, it is a RestatePromise (it must be raced with the rest).
        const idOf = (call: restate.InvocationPromise<unknown>): restate.RestatePromise<restate.InvocationId> => {
          const id = call.invocationId;
          if (!restate.isRestatePromise(id)) throw new Error('the SDK answered a call\'s id with a plain promise: the driver cannot race it');
          return id as unknown as restate.RestatePromise<restate.InvocationId>;
        };
        const callTurn = (sessionId: string, input: TurnInput) => ctx.genericCall<TurnInput, unknown>({
          service: SESSION_OBJECT, method: 'turn', key: sessionId, parameter: input, inputSerde: restate.serde.json, outputSerde: restate.serde.json,
        });
        const journal: DurableJournal = {
          attempt: randomUUID(),
          attemptEnded: ctx.request().attemptCompletedSignal,
          cancelled: cancel.signal,
          invocationId: String(ctx.request().id),
          // A model step: the batch of a delegation's call is over.
          // Its action started at once when the step is new (step-start.ts).
          run: (name, action) => watch(one(startStep(ctx as unknown as StepContext, name, action), name.startsWith(MODEL_STEP) ? 'model' : undefined)),
          // Made where a request reaches the user, not beside a command of the turn: 'quiet'.
          awakeable: <T>() => {
            const { id, promise } = ctx.awakeable<T>();
            return { id, promise: watch(one(promise, 'quiet')) };
          },
          awakeableLater: <T>() => {
            const { id, promise } = ctx.awakeable<T>();
            return { id, wait: () => watch(one(promise)) };
          },
          resolveAwakeable: (id, value) => ctx.resolveAwakeable(id, value),
          post: (mailbox, item) => {
            ctx.genericSend({ service: MAILBOX_OBJECT, method: 'post', key: mailbox, parameter: item, inputSerde: restate.serde.json });
          },
          callWithMailbox: (sessionId, input, mailbox) => {
            const call = callTurn(sessionId, input);
            const id = one(idOf(call), 'mailbox-call');
            id.catch(() => undefined); // seen by `cancel`, if called
            // Each wait for news is an awakeable of this invocation handed to the mailbox (`take`),
            // raced with the call's result as one combinator (the engine logs which completed
            // first, so a replay takes the same branch) handed to the driver right after the
            // `take` is sent: the same place in the journal on every attempt.
            const arm = (): Promise<{ outcome: unknown } | { items: unknown }> => {
              const { id: awakeable, promise } = ctx.awakeable<unknown>();
              ctx.genericSend({ service: MAILBOX_OBJECT, method: 'take', key: mailbox, parameter: awakeable, inputSerde: restate.serde.json });
              const news = one(restate.RestatePromise.race([
                call.map((outcome, failure) => {
                  if (failure) throw failure;
                  return { outcome };
                }),
                promise.map((items, failure) => {
                  if (failure) throw failure;
                  return { items };
                }),
              ]));
              news.catch(() => undefined); // seen by `next`
              return news;
            };
            let news = arm();
            const close = (): void => {
              ctx.genericSend({ service: MAILBOX_OBJECT, method: 'close', key: mailbox, parameter: null, inputSerde: restate.serde.json });
              driver.release();
            };
            return {
              next: () => watch(news).then(
                (got) => {
                  if ('items' in got) news = arm();
                  else close();
                  return got;
                },
                (error: unknown) => {
                  close();
                  throw error;
                }),
              cancel: () => void id.then((known) => ctx.invocation(known).cancel()).catch(() => undefined),
            };
          },
          call: (sessionId, input) => {
            const call = callTurn(sessionId, input);
            // Its id apart (short), so a cancel need not wait behind the call's own result.
            const [id, result] = driver.track([idOf(call), call], 'call') as [Promise<restate.InvocationId>, Promise<unknown>];
            id.catch(() => undefined); // seen by `cancel`, if called
            return {
              // Watched: the callee is cancelled when this turn is (the engine cancels the calls it
              // waits on, or the caller's core does), so a cancellation seen here is this turn's.
              result: watch(result),
              cancel: () => void id.then((known) => ctx.invocation(known).cancel()).catch(() => undefined),
            };
          },
        };
        try {
          const outcome = await runTurn(parsed.data, ctx.key, journal);
          const turnId = ctx.request().headers.get(TURN_HEADER);
          if (settled && turnId && !journal.attemptEnded.aborted) settled(parsed.data, ctx.key, turnId, outcome);
          return outcome;
        } catch (error) {
          if (error instanceof TurnRefused) throw new restate.TerminalError(error.message);
          throw error;
        }
      },
    },
    options: { retryPolicy: TURN_RETRY, inactivityTimeout: INACTIVITY_MS, abortTimeout: INACTIVITY_MS },
  });
}
