import type { TurnDeps } from '../runtime/agent-loop';
import type { DecideAsks } from '../runtime/approval-phase';
import type { ExecuteTool } from '../runtime/ports';
import type { StreamOnce, StreamResult } from '../runtime/stream';
import type { ToolResult } from '../tools/types';
import type { TurnInput } from './turn-messages';

/**
 * The engine's journal as a turn's steps see it (docs/engine.md#a-turn-on-a-worker). `run`
 * executes `action` once and records its JSON result under `name`; when the invocation is
 * replayed, a recorded step returns its record without calling `action`. Steps must be started
 * in the same order on every attempt. `attempt` differs for each execution of the handler.
 */
export interface DurableJournal {
  run<T>(name: string, action: () => Promise<T>): Promise<T>;
  /**
   * A durable promise (docs/engine.md#approvals): its id is the same on every attempt (the n-th
   * awakeable of the invocation), and it is resolved from outside through the ingress.
   */
  awakeable<T>(): { readonly id: string; readonly promise: Promise<T> };
  /** An awakeable whose promise is awaited only when `wait` is called (a command issued in between must not wait behind it). */
  awakeableLater<T>(): { readonly id: string; wait(): Promise<T> };
  /** Resolve an awakeable of any invocation (a journaled command of this one). */
  resolveAwakeable(id: string, value: unknown): void;
  /** Post `item` to the delegation mailbox `mailbox` (mailbox.ts; a one-way send, journaled). */
  post(mailbox: string, item: unknown): void;
  /**
   * `call` of a caller that takes its mail from `mailbox` meanwhile
   * (docs/engine.md#approvals-across-objects): `next` waits for whichever comes first (the order
   * the engine logs), the callee's result or the mailbox's next items. It rejects as `call`'s
   * result does.
   */
  callWithMailbox(sessionId: string, input: TurnInput, mailbox: string): { next(): Promise<{ readonly outcome: unknown } | { readonly items: unknown }>; cancel(): void };
  readonly attempt: string;
  /** Aborts when this attempt ended (its connection to the engine lost, or the handler done). */
  readonly attemptEnded: AbortSignal;
  /** Aborts when the invocation was cancelled (a front end cancelled the turn); `run` then rejects. */
  readonly cancelled: AbortSignal;
  /** The engine's id of this invocation (the hub cancels it by this id). */
  readonly invocationId: string;
  /**
   * A durable call of another session's turn (docs/engine.md#delegation): journaled in this
   * invocation, so a replay gets its result, or waits on the same callee, instead of calling
   * again. `result` rejects when the callee failed for good or was cancelled; `cancel` cancels
   * the callee's invocation.
   */
  call(sessionId: string, input: TurnInput): { readonly result: Promise<unknown>; cancel(): void };
}

/** The answer to a tool whose run an earlier attempt started and never finished. */
export const CUT_BY_WORKER = 'interrupted: the worker running this call stopped; it may or may not have taken effect — check before doing it again';

/** The answer to a tool whose turn was cancelled through the engine while it ran. */
export const CANCELLED = 'interrupted: the turn was cancelled';

/** The `tool-start` of a call whose start no journaled step can vouch for (docs/engine.md#a-turn-on-a-worker): it is answered interrupted. */
const START_UNKNOWN = 'unknown';

/** A StreamResult as JSON (its Map as entries), with the attempt that made the call. */
interface RecordedStream extends Omit<StreamResult, 'inputErrors'> {
  readonly inputErrors: [string, string][];
  readonly attempt?: string;
}

const record = (result: StreamResult, attempt: string): RecordedStream => ({ ...result, inputErrors: [...result.inputErrors], attempt });
const restore = ({ attempt: _attempt, ...recorded }: RecordedStream): StreamResult => ({ ...recorded, inputErrors: new Map(recorded.inputErrors) });

/**
 * What vouches for a tool call's start (docs/engine.md#a-turn-on-a-worker), by tool use id, set
 * from the journal as the turn goes: `model` is the attempt that made the model call asking for
 * it, `first` whether it is that call's first tool use, `asked` (set when its batch waited on
 * decisions) the attempt that journaled the batch's `asks` step. One per invocation.
 */
export interface ToolFence {
  readonly model: string;
  readonly first: boolean;
  asked?: string;
}
export type ToolFences = Map<string, ToolFence>;

/** How the name of a model call's step begins (the driver ends a delegation's window at one, invocation-driver.ts). */
export const MODEL_STEP = 'model ';

/**
 * Each model call of a session becomes the step `model <session> <n>`: a finished call
 * (its text, tool calls, usage already emitted) is returned from the journal on a replay; the
 * model is not asked again. Deltas stream live while the step runs and are not recorded.
 */
export function journaledStream(stream: StreamOnce, journal: DurableJournal, fences?: ToolFences): StreamOnce {
  const calls = new Map<string, number>();
  return async (turn, choice, context) => {
    const n = (calls.get(turn.session.id) ?? 0) + 1;
    calls.set(turn.session.id, n);
    try {
      const recorded = await journal.run(`${MODEL_STEP}${turn.session.id} ${n}`, async () => record(await stream(turn, choice, context), journal.attempt));
      const { attempt } = recorded;
      if (fences && attempt !== undefined) recorded.toolUses.forEach((use, i) => fences.set(use.id, { model: attempt, first: i === 0 }));
      return restore(recorded);
    } catch (error) {
      // Cancelled through the engine: the turn ends interrupted, as a cancel in-process does.
      if (!journal.cancelled.aborted) throw error;
      turn.controller.abort();
      return { text: '', toolUses: [], inputErrors: new Map(), aborted: true };
    }
  };
}

/** An answer a tool call sends to another invocation's awakeable (resolve_approval of a request held for a delegate elsewhere). */
export interface SentAnswer {
  readonly awakeable: string;
  readonly answer: unknown;
}

/**
 * What a tool call sends to other invocations: collected while it runs (`take`, inside its step,
 * so they are journaled with its result), and sent after the step on every attempt (`sent`
 * tells the sender: on a replay the tool does not run, its answers come from the journal).
 */
export interface ToolAnswers {
  take(toolUseId: string): SentAnswer[];
  sent(answer: SentAnswer): void;
}

/**
 * A batch that waits on decisions first journals `asks <session> <n>` with the attempt (before any
 * request is raised), so a replay knows the attempt that made the model call went that way: then
 * its tools were fenced by `tool-start` steps (journaledExecute). A cancel while it is journaled
 * ends the turn interrupted (the batch's calls stay undecided).
 */
export function journaledAsks(decideAsks: DecideAsks, journal: DurableJournal, fences: ToolFences): DecideAsks {
  const counts = new Map<string, number>();
  return async (turn, batch) => {
    const n = (counts.get(turn.session.id) ?? 0) + 1;
    counts.set(turn.session.id, n);
    let asked: string;
    try {
      asked = await journal.run(`asks ${turn.session.id} ${n}`, async () => journal.attempt);
    } catch (error) {
      if (!journal.cancelled.aborted) throw error;
      turn.controller.abort();
      return;
    }
    for (const call of batch.calls) {
      const fence = fences.get(call.use.id);
      if (fence) fence.asked = asked;
    }
    return decideAsks(turn, batch);
  };
}

/**
 * Each tool run is the step `tool <id>` with its result, and what vouches for its start
 * (`fences`, docs/engine.md#a-turn-on-a-worker): the model call's first tool use in a batch that
 * waited on no decision starts on the model step's acknowledgement — it runs only in the attempt
 * that made that call (a later attempt answers it `CUT_BY_WORKER`: the earlier one may have
 * started it). Every other tool first journals `tool-start <id>` with the attempt that starts it:
 * a later attempt answers it `CUT_BY_WORKER`, and a `tool-start` no journaled step vouches for
 * (its batch waited on decisions, but the attempt that made the model call did not journal the
 * `asks`) is answered so too. On a replay a finished tool returns its result without running.
 * Answers the tool sends elsewhere (`answers`) are recorded with its result and sent once it is
 * journaled, the same on every attempt.
 */
export function journaledExecute(execute: ExecuteTool, journal: DurableJournal, answers?: ToolAnswers, fences?: ToolFences): ExecuteTool {
  return async (tool, input, context) => {
    const id = context.toolUseId;
    // A delegation runs the target's turn, whose steps are journaled themselves: not a step.
    if (tool.startsTurns) return execute(tool, input, context);
    const fence = fences?.get(id);
    try {
      const startedBy = fence?.first && fence.asked === undefined
        ? fence.model
        : await journal.run(`tool-start ${id}`, async () =>
          !fence || fence.asked === undefined || fence.model === journal.attempt || fence.asked === fence.model ? journal.attempt : START_UNKNOWN);
      const recorded = await journal.run<ToolResult & { answers?: SentAnswer[] }>(`tool ${id}`, async () => {
        if (startedBy !== journal.attempt) return { content: CUT_BY_WORKER, isError: true, summary: 'interrupted (worker stopped)', failure: 'interrupted' };
        const result = await execute(tool, input, context);
        const sent = answers?.take(id) ?? [];
        return sent.length > 0 ? { ...result, answers: sent } : result;
      });
      const { answers: sent, ...result } = recorded;
      for (const answer of sent ?? []) {
        journal.resolveAwakeable(answer.awakeable, answer.answer);
        answers?.sent(answer);
      }
      return result;
    } catch (error) {
      if (!journal.cancelled.aborted) throw error;
      return { content: CANCELLED, isError: true, summary: 'interrupted (cancelled)', failure: 'interrupted' };
    }
  };
}

/** The turn's steps with the model call journaled (the tool executor is wrapped where the core is built). */
export function journaledTurn(deps: TurnDeps, journal: DurableJournal): TurnDeps {
  return { ...deps, stream: journaledStream(deps.stream, journal) };
}
