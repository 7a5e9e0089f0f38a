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
      return restore(await journal.run(`model ${turn.session.id} ${n}`, async () => record(await stream(turn, choice, context))));
    } catch (error) {
      // Cancelled through the engine: the turn ends interrupted, as a cancel in-process does.
      if (!journal.cancelled.aborted) throw error;
      turn.controller.abort();
      return { text: '', toolUses: [], inputErrors: new Map(), aborted: true };
    }
  };
}

/**
 * Each tool run becomes two steps: `tool-start <id>` records which attempt started it, then
 * `tool <id>` its result. On a replay a finished tool returns its result without running; a tool
 * an earlier attempt started but never finished (its worker died) is answered `CUT_BY_WORKER`
 * instead of running twice.
 */
export function journaledExecute(execute: ExecuteTool, journal: DurableJournal): ExecuteTool {
  return async (tool, input, context) => {
    const id = context.toolUseId;
    // A delegation runs the target's turn, whose steps are journaled themselves: not a step.
    if (tool.startsTurns) return execute(tool, input, context);
    try {
      const startedBy = await journal.run(`tool-start ${id}`, async () => journal.attempt);
      return await journal.run<ToolResult>(`tool ${id}`, () =>
        startedBy === journal.attempt
          ? execute(tool, input, context)
          : Promise.resolve({ content: CUT_BY_WORKER, isError: true, summary: 'interrupted (worker stopped)', failure: 'interrupted' }));
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
