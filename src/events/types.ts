import type { Message } from '../model/message';

/** Status of one agent in one session, as shown in lane headers. */
export type AgentStatus = 'idle' | 'thinking' | 'running-tool' | 'waiting-approval' | 'error';
export type NoticeLevel = 'info' | 'warn' | 'error';
export type ApprovalDecision = 'approved' | 'rejected';
/** Who made an authorization decision: `rule`, `policy`, `llm`, `agent:<id>`, `user`, `headless`, `cancel`, `remote:<channel>…`. */
/**
 * Why a tool call failed, carried by its result and `tool-call-end` so front ends and tests
 * need not match on text: bad arguments, refused by policy or rules, an approval rejected,
 * cut short (cancel, stop), or the tool itself failed.
 */
export type ToolFailureKind = 'invalid-input' | 'denied' | 'rejected' | 'interrupted' | 'failed';
export type DecidedBy = 'rule' | 'policy' | 'llm' | 'user' | 'headless' | 'cancel' | `agent:${string}` | RemoteActor;
/** The user deciding through a remote front end (docs/remote.md): `remote:web`, `remote:telegram:<user>`. */
export type RemoteActor = `remote:${string}`;

/** The fields every event carries. `seq` grows by one per run. */
export interface EventEnvelope {
  readonly seq: number;
  readonly at: string;
  readonly runId: string;
}

/** Event bodies, keyed by `type` (docs/design.md#events). */
export interface EventBodies {
  'run-start': { resumed: boolean };
  'run-end': { reason: string };
  'session-open': { sessionId: string; initiatorId: string; responderId: string; name: string };
  'message-add': { sessionId: string; message: Message };
  'text-delta': {
    sessionId: string; participantId: string; text: string;
    /** Written (ledger, `--json --coalesce`) as one line for this many deltas of the session; `seq` is the last one's (events/coalesce.ts). */
    joined?: number;
  };
  'tool-call-start': { sessionId: string; participantId: string; toolUseId: string; name: string; input: unknown; sandboxed?: boolean };
  'tool-call-end': {
    sessionId: string; participantId: string; toolUseId: string; name: string; isError: boolean; summary: string;
    /** Why the call failed (present exactly when `isError`). */
    failure?: ToolFailureKind;
  };
  'approval-request': {
    requestId: string; sessionId: string; participantId: string; chain: string[]; toolUseId: string;
    toolName: string; input: unknown; ruleId: string | null; approverId: string; reason?: string;
    /** For tools that start processes: whether the call will run in the OS sandbox (docs/sandbox.md). */
    sandboxed?: boolean;
  };
  'approval-resolve': { requestId: string; decision: ApprovalDecision; decidedBy: DecidedBy; reason: string };
  'agent-status': { participantId: string; sessionId: string; status: AgentStatus; detail?: string };
  usage: {
    sessionId: string; participantId: string; model: string; inputTokens: number; outputTokens: number;
    cacheReadTokens: number; cacheWriteTokens: number; costUsd: number | null;
  };
  'participant-change': { participantId: string; change: 'added' | 'modified' | 'retired' };
  notice: { level: NoticeLevel; message: string; sessionId?: string };
  /**
   * A snapshot of the workspace taken before a batch that may change it (docs/undo.md). Emitted
   * again once the batch ended, with `files`: the workspace paths the batch changed.
   */
  checkpoint: { checkpointId: string; sessionId: string; participantId: string; toolUseIds: string[]; files?: string[] };
  // Context management (docs/context.md).
  /** A session's request was made smaller: `eviction` (old tool results as stubs) or `summary` (older messages summarized). */
  compaction: {
    sessionId: string; participantId: string; kind: 'eviction' | 'summary';
    /** Messages before this index are summarized (`summary`) or have long results stubbed (`eviction`). */
    firstKept: number; tokensBefore: number; tokensAfter: number; summary?: string;
  };
  /** The estimated size of the request about to be sent, and the model's window (for `ctx 41%`). */
  'context-size': { sessionId: string; participantId: string; tokens: number; window: number };
  /** An MCP server's state (docs/mcp.md): `tools` are the Legion names it offers now. */
  'mcp-status': { server: string; state: McpServerState; tools: string[]; error?: string };
  /** Progress a running tool reports (MCP `notifications/progress`); `total` when known. */
  'tool-progress': { sessionId: string; participantId: string; toolUseId: string; progress: number; total?: number; message?: string };
  // Workflows (docs/workflows.md): one workflow run `workflowId` of workflow `name`.
  /** On a resume, `ended` names the steps that ended before the restart and `spentUsd` what the workflow spent so far. */
  'workflow-start': { workflowId: string; name: string; steps: string[]; budgetUsd?: number; resumed: boolean; ended?: string[]; spentUsd?: number };
  'workflow-step-start': { workflowId: string; name: string; stepId: string; agent: string; sessionId: string; resumed: boolean };
  /** `skipped`: a step it runs after failed, was skipped or was cancelled, or the budget stopped new steps. */
  'workflow-step-end': {
    workflowId: string; name: string; stepId: string; sessionId: string; status: WorkflowStepEnd; error?: string; costUsd: number;
  };
  'workflow-end': {
    workflowId: string; name: string; status: WorkflowEnd; spentUsd: number;
    /** Steps that failed, and steps not run because of them (or of the budget, or a cancel). */
    failed: string[]; skipped: string[]; error?: string;
    /** When `done`: the workflow's output, its last step's (in file order) recorded output. */
    output?: string;
  };
}

export type WorkflowStepEnd = 'done' | 'failed' | 'cancelled' | 'skipped';
export type WorkflowEnd = 'done' | 'failed' | 'cancelled' | 'budget';

export type McpServerState = 'starting' | 'ready' | 'failed' | 'stopped';

export type EventType = keyof EventBodies;
/** One event of a given type, envelope included. */
export type EventOf<T extends EventType> = EventEnvelope & { readonly type: T } & Readonly<EventBodies[T]>;
/** The one event union of Legion. */
export type LegionEvent = { [T in EventType]: EventOf<T> }[EventType];
/** What an emitter passes in: the body with its type; the bus adds the envelope. */
export type EventInput = { [T in EventType]: { type: T } & EventBodies[T] }[EventType];

/** The events of a workflow run (docs/workflows.md#events). */
export type WorkflowEvent = EventOf<'workflow-start'> | EventOf<'workflow-step-start'> | EventOf<'workflow-step-end'> | EventOf<'workflow-end'>;
export const isWorkflowEvent = (e: LegionEvent): e is WorkflowEvent =>
  e.type === 'workflow-start' || e.type === 'workflow-step-start' || e.type === 'workflow-step-end' || e.type === 'workflow-end';

/** Every event type once: a record over `EventType`, so a type added to the union and not here does not compile. */
const EVENT_TYPE_RECORD: Readonly<Record<EventType, true>> = {
  'run-start': true, 'run-end': true, 'session-open': true, 'message-add': true, 'text-delta': true, 'tool-call-start': true, 'tool-call-end': true,
  'approval-request': true, 'approval-resolve': true, 'agent-status': true, usage: true, 'participant-change': true, notice: true,
  checkpoint: true,
  compaction: true, 'context-size': true,
  'mcp-status': true, 'tool-progress': true,
  'workflow-start': true, 'workflow-step-start': true, 'workflow-step-end': true, 'workflow-end': true,
};
export const EVENT_TYPES = Object.keys(EVENT_TYPE_RECORD) as readonly EventType[];
