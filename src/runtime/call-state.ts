import type { ApprovalRequest } from '../authz/approvals';
import type { Verdict } from '../authz/types';
import type { ToolFailureKind } from '../events/types';
import type { Message, ToolResultBlock, ToolUseBlock } from '../model/message';
import type { Tool, ToolResult } from '../tools/types';
import type { ResumeStage } from './resume-plan';

/**
 * The state of one tool call of a batch as it moves through the phases (agent-loop.ts):
 * the pre-scan (or, after a restart, the resume pre-pass) turns each call into `done`
 * (refused: its result is known), `ask` (needs a decision) or `run` (allowed); the approval
 * phase turns every `ask` into `run` or `done`; the execute phase turns every `run` into
 * `done`. What is authorized is exactly what runs: `input` is the validated input.
 */
export type CallState = CallDone | CallAsk | CallRun;

export interface CallDone {
  readonly phase: 'done';
  readonly use: ToolUseBlock;
  readonly result: ToolResult;
}

export interface CallAsk {
  readonly phase: 'ask';
  readonly use: ToolUseBlock;
  readonly tool: Tool;
  readonly input: unknown;
  readonly verdict: Verdict;
  /** The request raised before a restart for this call (re-offered, or its decision taken). */
  readonly request?: ApprovalRequest;
}

export interface CallRun {
  readonly phase: 'run';
  readonly use: ToolUseBlock;
  readonly tool: Tool;
  readonly input: unknown;
}

/** A call's final state; an error result without a kind counts as `failed` (the tool's own failure). */
const doneWith = (use: ToolUseBlock, result: ToolResult): CallDone =>
  ({ phase: 'done', use, result: result.isError ? { ...result, failure: result.failure ?? 'failed' } : result });

/** A failed result with its kind. */
export const failed = (failure: ToolFailureKind, content: string): ToolResult => ({ content, isError: true, failure });

/**
 * The calls of one batch, in the model's order: the pre-scan `add`s each, later phases replace
 * a call's state through `set`; a `done` call stays done (first result wins) and is reported
 * once (`tool-call-end`).
 */
export class Batch {
  private readonly states: CallState[] = [];
  /** Text notes for the agent (denial-loop advice), appended after the results. */
  readonly notes: string[] = [];

  constructor(private readonly onEnd: (done: CallDone) => void) {}

  get calls(): readonly CallState[] {
    return this.states;
  }

  add(state: CallState): void {
    this.states.push(state);
    if (state.phase === 'done') this.onEnd(state);
  }

  set(state: CallState): void {
    const at = this.states.findIndex((s) => s.use.id === state.use.id);
    if (at === -1 || this.states[at]!.phase === 'done') return;
    this.states[at] = state;
    if (state.phase === 'done') this.onEnd(state);
  }

  end(use: ToolUseBlock, result: ToolResult): void {
    this.set(doneWith(use, result));
  }

  endNew(use: ToolUseBlock, result: ToolResult): void {
    this.add(doneWith(use, result));
  }
  of<P extends CallState['phase']>(phase: P): Extract<CallState, { phase: P }>[] {
    return this.states.filter((s): s is Extract<CallState, { phase: P }> => s.phase === phase);
  }

  /** One result per call, in call order (every call must be done). */
  results(): ToolResultBlock[] {
    return this.states.map((s) => {
      if (s.phase !== 'done') throw new Error(`call ${s.use.id} has no result`);
      return { type: 'tool_result', toolUseId: s.use.id, content: s.result.content, ...(s.result.isError ? { isError: true } : {}) };
    });
  }
}

/** Where a resumed turn starts again (restart.ts plans it, resume-prepass.ts runs its batch). */
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
