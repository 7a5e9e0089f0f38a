import type { Message } from '../../src/model/message';
import type { AgentStatus, McpServerState, NoticeLevel, WorkflowEnd } from '../../src/events/types';
import type { PendingApproval } from '../../src/runtime/core-api';
import type { Participant } from '../../src/collective/participant';

/** A notice shown inside a session's transcript. */
export interface NoticeEntry {
  readonly role: 'notice';
  readonly level: NoticeLevel;
  readonly text: string;
  readonly at: string;
}

/** A summary compaction of the session (docs/context.md): one folded row that unfolds to the summary. */
export interface CompactionEntry {
  readonly role: 'compaction';
  /** Messages folded into this summary (since the previous one). */
  readonly summarized: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly summary: string;
  readonly at: string;
}

/** One transcript entry: a persisted message (shared with the core, never copied), a notice or a compaction mark. */
export type Entry = Message | NoticeEntry | CompactionEntry;

export type ToolState = 'pending' | 'running' | 'waiting-approval' | 'ok' | 'error';

/** A tool call as the live events of this run report it (history falls back to results). */
export interface ToolLive {
  readonly name: string;
  readonly input: unknown;
  readonly state: ToolState;
  readonly summary?: string;
  /** For tools that start processes: whether the call runs in the OS sandbox. */
  readonly sandboxed?: boolean;
  /** Progress the tool reported while running (`tool-progress`): "2/5", "40%", or its message. */
  readonly progress?: string;
}

/** Everything the UI knows about one session. Replaced (never mutated) when it changes. */
export interface SessionView {
  readonly id: string;
  readonly initiatorId: string;
  readonly responderId: string;
  readonly name: string;
  readonly status: AgentStatus;
  /** The running tool's name (status running-tool) or an error text (status error). */
  readonly detail?: string;
  /** Append-only. */
  readonly entries: readonly Entry[];
  /** The responder's text streamed since its last persisted message. */
  readonly streaming: string;
  /** Grows each time `streaming` starts over (a finished or dropped stream): within one epoch it only grows. */
  readonly streamEpoch: number;
  readonly tools: Readonly<Record<string, ToolLive>>;
  readonly tokens: number;
  readonly costUsd: number;
  /** False when some usage had no known price. */
  readonly costKnown: boolean;
  readonly lastActivity: string;
  /** The estimated size of the last request and the model's window (`ctx 41%` in the lane header). */
  readonly context?: { readonly tokens: number; readonly window: number };
  /** Messages before this index are summarized (the last summary's `firstKept`). */
  readonly summarizedUpTo?: number;
  /** The session works in a git worktree (docs/worktrees.md): its lane header says `worktree`. */
  readonly isolated?: boolean;
}

/** Top visible line of a lane: following the tail, or anchored at a line of an entry. */
export type ScrollPos =
  | { readonly kind: 'follow' }
  | { readonly kind: 'anchor'; readonly entry: number; readonly line: number };

export const FOLLOW: ScrollPos = { kind: 'follow' };

/** The composer's text of one lane. `pastes` hold large pasted texts shown as placeholders. */
export interface Draft {
  readonly text: string;
  readonly cursor: number;
  readonly pastes: readonly string[];
}

export const EMPTY_DRAFT: Draft = { text: '', cursor: 0, pastes: [] };

/** Per-session view state: it survives the session leaving and re-entering a lane. */
export interface LaneView {
  readonly scroll: ScrollPos;
  readonly draft: Draft;
  /** Tool results unfolded in this lane. */
  readonly expanded: boolean;
}

export const DEFAULT_VIEW: LaneView = { scroll: FOLLOW, draft: EMPTY_DRAFT, expanded: false };

/**
 * The modal layer. Exactly one modal at most; keys go to it while it is open.
 * Issue 7 adds the real screens for the kinds other than help (see modals/registry.ts).
 */
export type ModalState =
  | { readonly kind: 'help' }
  /**
   * `openedByItselfAt`: when a request arriving opened it (the clock of `App`'s `now`): the
   * queue's own key pressed just after does not close it (app-keys.ts).
   */
  | { readonly kind: 'approvals'; readonly openedByItselfAt?: number }
  | { readonly kind: 'switcher' }
  | { readonly kind: 'new-session' }
  /** The checkpoints of one session: see and undo what its agent changed (docs/undo.md). */
  | { readonly kind: 'checkpoints'; readonly sessionId: string }
  | { readonly kind: 'history' };

export type ModalKind = ModalState['kind'];

export interface UiSettings {
  readonly maxLanes: number;
  readonly autoOpenLanes: boolean;
}

export interface UiState {
  readonly runId: string;
  readonly resumed: boolean;
  /** Set by `run-end`. */
  readonly ended: string | null;
  readonly settings: UiSettings;
  readonly sessions: Readonly<Record<string, SessionView>>;
  /** Session ids in the order they were opened. */
  readonly order: readonly string[];
  /** Session ids shown in lanes, left to right / top to bottom. */
  readonly lanes: readonly string[];
  /** Index into `lanes`. */
  readonly focus: number;
  readonly views: Readonly<Record<string, LaneView>>;
  readonly pending: Readonly<Record<string, PendingApproval>>;
  readonly totals: { readonly tokens: number; readonly costUsd: number; readonly costKnown: boolean };
  /** The model of the last usage event (the status bar shows it). */
  readonly model: string | null;
  readonly participants: readonly Participant[];
  /** The last notice without a session (shown above the status bar until the next key). */
  readonly notice: { readonly level: NoticeLevel; readonly text: string } | null;
  /** A one-line answer to the last key (refused typing, queued message…); cleared by the next key. */
  readonly flash: { readonly level: NoticeLevel; readonly text: string } | null;
  readonly modal: ModalState | null;
  /** MCP servers by name, from `mcp-status` (the status bar marks failed ones). */
  readonly mcp?: Readonly<Record<string, { readonly state: McpServerState; readonly error?: string }>>;
  /** Workflow runs by id, from the `workflow-*` events (components/state/workflows.ts). */
  readonly workflows?: Readonly<Record<string, WorkflowView>>;
  /** An attached core's connection while it is down (`LinkState` of core-api.ts): shown instead of the notice and in the status bar until it is back. */
  readonly link?: { readonly state: 'reconnecting' | 'gone'; readonly text: string } | null;
  /** Sent texts, oldest first, and the position while browsing them with ↑/↓ (null: not browsing). */
  readonly sent: readonly string[];
  readonly sentIndex: number | null;
  /** Time of the first Ctrl+C of a possible double press (ms), or null. */
  readonly quitArmedAt: number | null;
}

/** One workflow run as the status bar shows it. */
export interface WorkflowView {
  readonly name: string;
  readonly total: number;
  /** Steps that ended (done, failed, cancelled or skipped). */
  readonly ended: readonly string[];
  /** The steps' sessions: their `usage` adds to `spentUsd`. */
  readonly sessions: readonly string[];
  readonly spentUsd: number;
  readonly status: 'running' | WorkflowEnd;
}

export function initialUiState(runId: string, settings: UiSettings): UiState {
  return {
    runId, resumed: false, ended: null, settings,
    sessions: {}, order: [], lanes: [], focus: 0, views: {}, pending: {},
    totals: { tokens: 0, costUsd: 0, costKnown: true }, model: null, participants: [],
    notice: null, flash: null, modal: null, sent: [], sentIndex: null, quitArmedAt: null,
  };
}

export function newSessionView(id: string, initiatorId: string, responderId: string, name: string, at: string): SessionView {
  return {
    id, initiatorId, responderId, name, status: 'idle', entries: [], streaming: '', streamEpoch: 0, tools: {},
    tokens: 0, costUsd: 0, costKnown: true, lastActivity: at,
  };
}

/** The session shown in the focused lane, if any. */
export function focusedSession(state: UiState): SessionView | undefined {
  const id = state.lanes[state.focus];
  return id === undefined ? undefined : state.sessions[id];
}

export function viewOf(state: UiState, sessionId: string): LaneView {
  return state.views[sessionId] ?? DEFAULT_VIEW;
}

/** The user's own sessions: the user is the initiator. */
export function isUserSession(session: SessionView): boolean {
  return session.initiatorId === 'user';
}

export function isBusy(status: AgentStatus): boolean {
  return status !== 'idle' && status !== 'error';
}

/**
 * A user lane (`<agent> → user · name`, an agent asked the user) whose question is open: the
 * core reports the lane busy (`thinking`, "waiting for your answer") until it is answered,
 * withdrawn or interrupted.
 */
export function awaitsUser(session: SessionView): boolean {
  return session.responderId === 'user' && isBusy(session.status);
}

/** Lanes the user can type into: the user's own, and a user lane while its question is open. Others are read-only. */
export function canType(session: SessionView): boolean {
  return isUserSession(session) || awaitsUser(session);
}
