import type { Message } from '../model/message';
import type { IsolationPrepared } from '../model/isolation';
import type { EventInput } from '../events/types';

/** How a step's turn ended, as the core reports it (src/runtime/turn.ts `TurnOutcome`). */
export type StepTurnOutcome =
  | { kind: 'done'; text: string; incomplete?: string; merge?: string }
  | { kind: 'failed'; error: string; merge?: string }
  | { kind: 'interrupted' };

/** The few core commands a workflow uses to run its steps as user turns. */
export interface StepPort {
  /** Create (or reuse) `user → agent · name`; emits `session-open` when new (the TUI opens its lane). */
  openSession(agent: string, name: string): { ok: true; sessionId: string } | { ok: false; error: string };
  send(agent: string, text: string, name: string): { ok: true; sessionId: string } | { ok: false; error: string };
  /** Resolves once the session has no running or queued turn. */
  idle(sessionId: string): Promise<string>;
  /** How the session's last user-started turn ended (undefined: none in this process). */
  outcome(sessionId: string): StepTurnOutcome | undefined;
  cancel(sessionId: string): void;
  history(sessionId: string): readonly Message[];
  /** True while a turn runs or waits in the session (e.g. one the core resumed after a restart). */
  isBusy(sessionId: string): boolean;
  /** Worktree isolation (docs/worktrees.md): absent, steps run without it. */
  readonly isolation?: {
    readonly configDefault: 'worktree' | 'none';
    /** Whether the agent holds a tool that changes files. */
    writes(agent: string): boolean;
    /** Make the session's worktree ready; the note tells the agent where it works. */
    prepare(sessionId: string, agent: string, mode: 'worktree' | 'none'): Promise<IsolationPrepared>;
  };
}

/** A reached workflow budget, as the approval request's input carries it (docs/workflows.md). */
export interface WorkflowBudgetRequest {
  readonly workflowId: string;
  readonly name: string;
  /** The session of the step that was about to start, and its agent. */
  readonly sessionId: string;
  readonly agent: string;
  readonly spentUsd: number;
  readonly limit: number;
  readonly raiseBy: number;
}

/** Raise a `toolName: "budget"` request for the user (headless: rejected at once) and wait for the decision. */
export type RequestBudget = (request: WorkflowBudgetRequest, signal: AbortSignal) => Promise<'approved' | 'rejected'>;

export type Emit = (event: EventInput) => void;
