import type { TurnDeps } from '../runtime/agent-loop';
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

/** A StreamResult as JSON (its Map as entries). */
interface RecordedStream extends Omit<StreamResult, 'inputErrors'> {
  readonly inputErrors: [string, string][];
}

const record = (result: StreamResult): RecordedStream => ({ ...result, inputErrors: [...result.inputErrors] });
const restore = (recorded: RecordedStream): StreamResult => ({ ...recorded, inputErrors: new Map(recorded.inputErrors) });

/** How the name of a model call's step begins (the driver ends a delegation's window at one, invocation-driver.ts). */
export const MODEL_STEP = 'model ';

/**
 * Each model call of a session becomes the step `model <session> <n>`: a finished call
 * (its text, tool calls, usage already emitted) is returned from the journal on a replay; the
 * model is not asked again. Deltas stream live while the step runs and are not recorded.
 */
export function journaledStream(stream: StreamOnce, journal: DurableJournal): StreamOnce {
  const calls = new Map<string, number>();
  return async (turn, choice, context) => {
    const n = (calls.get(turn.session.id) ?? 0) + 1;
    calls.set(turn.session.id, n);
    try {
      return restore(await journal.run(`${MODEL_STEP}${turn.session.id} ${n}`, async () => record(await stream(turn, choice, context))));
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
 * Each tool run becomes two steps: `tool-start <id>` records which attempt started it, then
 * `tool <id>` its result. On a replay a finished tool returns its result without running; a tool
 * an earlier attempt started but never finished (its worker died) is answered `CUT_BY_WORKER`
 * instead of running twice. Answers the tool sends elsewhere (`answers`) are recorded with its
 * result and sent once it is journaled, the same on every attempt.
 */
export function journaledExecute(execute: ExecuteTool, journal: DurableJournal, answers?: ToolAnswers): ExecuteTool {
  return async (tool, input, context) => {
    const id = context.toolUseId;
    // A delegation runs the target's turn, whose steps are journaled themselves: not a step.
    if (tool.startsTurns) return execute(tool, input, context);
    try {
      const startedBy = await journal.run(`tool-start ${id}`, async () => journal.attempt);
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
