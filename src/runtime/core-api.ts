import type { ContextRecord } from '../context/records';
import type { EventBus } from '../events/bus';
import type { UndoService } from '../checkpoints/undo-service';
import type { HistoryService } from '../session/history-service';
import type { LegionConfig } from '../config/schema';
import type { Message } from '../model/message';
import type { Participant } from '../collective/participant';
import type { AgentStatus, RemoteActor } from '../events/types';
import type { UsageTotals } from '../providers/usage-totals';
import type { PendingApproval } from '../model/approval';

export type { PendingApproval } from '../model/approval';
export type { TranscriptLine } from '../session/transcript';
export type { HistorySearchResult, HistoryHit } from '../session/history-search';
export type { RunSummary, SessionSummary, HistoryService } from '../session/history-service';

/** One directional named session of the run (docs/design.md#participants-sessions-runs). */
/**
 * The state of an attached core's connection to `legion serve` (docs/serve.md#when-the-server-goes-away),
 * with the line a front end shows for it. `connected` again after a loss comes before the
 * notice that says the connection is back; `gone`: no more tries (another run, a protocol break,
 * or the client's bound reached): quitting is all that is left.
 */
export type LinkState =
  | { readonly state: 'connected' }
  | { readonly state: 'reconnecting'; readonly attempt: number; readonly message: string }
  | { readonly state: 'gone'; readonly message: string };

export interface SessionInfo {
  readonly id: string;
  readonly initiatorId: string;
  readonly responderId: string;
  readonly name: string;
  readonly status: AgentStatus;
  /** ISO time of the last message or event in it. */
  readonly lastActivity: string;
  readonly messageCount: number;
  /** A user lane (`session-<agent>__user__<name>`) whose agent waits for the user's answer. */
  readonly awaitingUser?: boolean;
}

/** One workflow file as front ends list it (docs/workflows.md). */
export interface WorkflowInfo {
  readonly name: string;
  readonly description: string;
  readonly steps: readonly string[];
  /** Input names (`--input <name>=…`) and whether the prompts use `{{input}}`. */
  readonly inputs: readonly string[];
  readonly usesInput: boolean;
  readonly file: string;
  readonly source: 'project' | 'shipped';
  readonly budgetUsd?: number;
  /** Set when the file is broken: `file:line: what is wrong`; it cannot run. */
  readonly error?: string;
}

/**
 * Workflows as a front end drives them (docs/workflows.md#core-interface), beside the core:
 * progress arrives as `workflow-*` events on the core's bus.
 */
export interface WorkflowCommands {
  /** Workflows that can run; a broken file is listed with its one-line error. */
  list(): Promise<readonly WorkflowInfo[]>;
  /** Start workflow `name`. Refuses unknown names, missing inputs, a second copy of a running one… */
  start(name: string, input: string, inputs?: Readonly<Record<string, string>>): Promise<{ ok: true; workflowId: string } | { ok: false; error: string }>;
  /** Cancel a running workflow's steps; false when no workflow of that id runs (attached: when not connected). */
  cancel(workflowId: string): boolean;
}

export type SendOutcome =
  | { ok: true; sessionId: string; queued: boolean }
  | { ok: false; error: string };

/**
 * The one command interface between a front end (TUI, `legion run`) and the core: the run's
 * commands. Everything that happens is reported on `bus`; commands return at once (work runs in
 * the background) except where they return a promise for a result. History, workflows and undo
 * are named services beside it (`ScreenSession`), not methods of it.
 */
export interface LegionCore {
  readonly runId: string;
  readonly bus: EventBus;
  /** Send a message from the user to `responderId` in session `name` (default 'default'). */
  send(responderId: string, text: string, name?: string): SendOutcome;
  /**
   * Answer the question an agent asked the user in a user lane (responder `user`).
   * `send(agentId, text, name)` does the same when that agent waits in the lane named `name`.
   */
  reply(sessionId: string, text: string): SendOutcome;
  /**
   * Token and cost totals of the run and of each session since the run began, restarts
   * included (kept in `runs/<runId>/usage.json`); `usage` events add to them from then on.
   */
  usage(): { readonly run: UsageTotals; readonly sessions: Readonly<Record<string, UsageTotals>> };
  /** Wait until the session has no running or queued turn; resolves with the responder's last text. */
  idle(sessionId: string): Promise<string>;
  /** Create (or reuse) `user → responderId · name` without sending; emits `session-open` when new. */
  openSession(responderId: string, name?: string): { ok: true; sessionId: string } | { ok: false; error: string };
  /** Approve or reject pending requests; refuses unknown or already-resolved ids. */
  resolveApprovals(
    requestIds: readonly string[],
    decision: 'approved' | 'rejected',
    /** `by`: a remote front end deciding for the user (audited as that, docs/remote.md); default `user`. */
    options?: { reason?: string; allowForSession?: boolean; by?: RemoteActor },
  ): { ok: true } | { ok: false; error: string };
  /** Interrupt the session's turn (and the sessions it waits on). */
  cancel(sessionId: string): void;
  participants(): Participant[];
  sessions(): SessionInfo[];
  history(sessionId: string): readonly Message[];
  /** The session's compaction and eviction records (docs/context.md), for marking compaction points. */
  contextRecords(sessionId: string): readonly ContextRecord[];
  /** Compact the session now (docs/context.md): refused while a turn runs in it; failures are also notices. */
  compact(sessionId: string): Promise<{ ok: true; text: string } | { ok: false; error: string }>;
  pendingApprovals(): PendingApproval[];
  /**
   * An attached core that missed events (its reconnection was answered with a snapshot only,
   * docs/serve.md#attaching) replaced its whole state with the server's: `listener` runs once it
   * did, before the notice that says so; a front end rebuilds its state from the core's reads.
   * A local core never misses events: its listener never runs. Returns the unsubscribe function.
   */
  onResync(listener: () => void): () => void;
  /** An attached core's connection changed state (`LinkState`); a local core's never does. Returns the unsubscribe function. */
  onLink(listener: (link: LinkState) => void): () => void;
  /** Cancel everything running, flush files, release the run lock. */
  shutdown(reason: string): Promise<void>;
}

/**
 * What the CLI hands a full-screen front end (components/start-tui.tsx): a composed run,
 * ready. The front end never composes a run itself (src/cli does, see src/cli/start-screen.ts).
 */
export interface ScreenSession {
  readonly core: LegionCore;
  readonly config: LegionConfig;
  /** For the status bar: "anthropic · claude-sonnet-4-5", "demo"… */
  readonly providerLabel: string;
  /** True in the no-key demo (scripted replies). */
  readonly demo: boolean;
  readonly runId: string;
  readonly resumed: boolean;
  /** Config warnings, stale-lock recovery, the demo notice…: show once at start. */
  readonly warnings: string[];
  /** Every run of the workspace, read-only, the current one live (docs/serve.md#history): the history browser reads only this. */
  readonly history: HistoryService;
  /** The workflows of the run: list, start, cancel. */
  readonly workflows: WorkflowCommands;
  /** Checkpoints and undo (docs/undo.md); absent when `checkpoints.enabled` is false. Opened on first use when not yet. */
  readonly undo?: UndoService;
  /** The core runs in `legion serve` and this front end is attached to it (docs/serve.md#attaching): closing detaches. */
  readonly attached?: boolean;
  /** Shut the core down (cancel turns, keep pending approvals), flush, release the run lock. Idempotent. */
  close(reason: string): Promise<void>;
  /** Start what must not delay the first frame (the sandbox probe, the checkpoint store, MCP servers; docs/performance.md); the screen calls it once drawn. */
  startBackground(): void;
}

/** The process around the screen. */
export interface ScreenOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `--plain`. */
  readonly plain: boolean;
  readonly workspaceRoot: string;
  stderr(text: string): void;
  /** Show this session in a focused lane once drawn. */
  readonly show?: string;
  /** Called once, after the first frame is written (the start's set-up for speed ends there). */
  readonly firstFrame?: () => void;
}

export interface ScreenOutcome {
  readonly code: number;
  /** The history browser asked to resume another run. */
  readonly switchTo?: { readonly runId: string; readonly sessionId?: string };
}

/** A full-screen front end: runs on one composed run until the user quits or asks to switch runs. */
export interface Screen {
  run(session: ScreenSession, options: ScreenOptions): Promise<ScreenOutcome>;
}

// Pure helpers a front end shares with the core (naming sessions, showing transcripts and
// approvals), re-exported so components/ never import src/session or src/storage (the import
// check forbids it; docs/architecture.md).
export { DEFAULT_SESSION_NAME, checkSessionName, sessionIdOf } from '../session/ids';
export { keyArgumentOf } from '../collective/tools/shipped';
export { isIsolationNote } from '../model/isolation';
export { mergeConflictOf } from '../authz/approvals/merge-input';
export { matchRanges, queryPattern } from '../session/history-search';
