import type { CheckpointBatch } from '../checkpoints/hook';
import type { Agent } from '../collective/participant';
import type { Message } from '../model/message';
import type { Provider } from '../providers/types';
import type { Tool, ToolContext, ToolResult } from '../tools/types';
export type { ToolCatalog } from '../tools/types';
export type { GrantGuard } from '../collective/grant';
import type { CallToAuthorize, Verdict } from '../authz/types';
import type { ApprovalRequest } from '../authz/approvals';
import type { AuditEntry } from '../authz/audit';
import type { PendingApproval } from '../model/approval';
import type { RemoteActor } from '../events/types';
import type { Turn } from './turn';

/**
 * The narrow interfaces the runtime needs from the other areas (providers, tools, authz).
 * The composition root (`src/cli/compose.ts`) adapts the real modules to them; tests pass
 * small fakes. Every port is synchronous or returns a promise that never rejects, unless
 * its comment says otherwise.
 */

/** Run one tool: validate input, confine paths, never throw (an error result instead). */
export type ExecuteTool = (tool: Tool, input: unknown, context: ToolContext) => Promise<ToolResult>;

/** The provider and model an agent talks to. */
export type ProviderChoice =
  | { ok: true; provider: Provider; model: string; maxTokens: number }
  | { ok: false; error: string };
export type ResolveProvider = (agent: Agent) => ProviderChoice;

/** The rule engine + policies (docs/design.md#authorization, steps 1–3). May throw: the executor turns a throw into a deny. */
export type Authorize = (call: CallToAuthorize) => Verdict;

/** Approver choice and the cascade (docs/design.md#authorization, step 4); `next` returns null past the user. */
export interface ApproverPolicy {
  choose(query: { chain: readonly string[]; toolName: string; explicitApprover?: string; personOnly?: boolean }): string;
  next(current: string, query: { chain: readonly string[]; toolName: string }): string | null;
}

/** One authorization decision for the audit log (docs/design.md#authorization, step 5); the sink adds the run id. */
export type AuditRecord = Omit<AuditEntry, 'runId'>;
/** Never throws (a failing audit write is reported by the adapter as a notice). */
export type AuditSink = (entry: AuditRecord) => void;

/** Consecutive-denial tracking per agent and session: returns a note for the agent once the threshold is reached. */
export interface DenialTracker {
  record(sessionId: string, participantId: string, outcome: 'denied' | 'allowed'): string | null;
}

/** Optional LLM triage of an `ask`: may only approve (docs/design.md#authorization, step 4). */
export type Triage = (
  request: { toolName: string; input: unknown; participantId: string; chain: readonly string[]; ruleId: string | null; reason: string; sessionId: string },
  signal: AbortSignal,
) => Promise<{ approve: boolean; reasoning: string }>;

/** Cost of one provider call in USD, null when the model has no price. */
export type PriceOf = (usage: { model: string; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number }) => number | null;

/** "Approve and allow the same for this session" (issue 5). Returns an error text when refused. */
export type AddAllowance = (request: ApprovalRequest) => string | null;

/** A tool batch about to run (phase 3), as the checkpoint hook sees it (defined there, checkpoints/hook.ts). */
export type BatchToRun = CheckpointBatch;
/**
 * Called before the calls of a batch run, with what will run; the function it returns (if any)
 * is called once they ended. Checkpoints use it (docs/undo.md). Never rejects.
 */
export type BeforeBatch = (batch: BatchToRun) => Promise<(() => Promise<void>) | undefined>;

/** Who a hook runs for: the turn's session and agent (docs/conventions.md#hooks). */
export interface HookTurn {
  readonly sessionId: string;
  /** The session's root: the workspace, or its worktree when isolated (set by the core). */
  readonly root?: string;
  readonly participantId: string;
  readonly initiatorId: string;
  readonly chain: readonly string[];
}

/** One tool call as a hook sees it. */
export interface HookCall extends HookTurn {
  readonly toolName: string;
  readonly toolUseId: string;
  readonly input: unknown;
}

/**
 * Claude-Code-compatible hooks around a turn (docs/conventions.md#hooks). Every method is
 * bounded by the hooks' timeouts and never rejects: a failing hook is a warning notice.
 */
export interface TurnHooks {
  /**
   * Before a call the rules allowed or asked about: the verdict the hooks leave. A hook may
   * deny (any time), ask, or allow an ask; never allow what the rules denied.
   */
  preToolUse(call: HookCall, verdict: Verdict, signal: AbortSignal): Promise<Verdict>;
  /** After a call ran: texts for the agent (a hook's block reason, its additional context). */
  postToolUse(call: HookCall, result: ToolResult, signal: AbortSignal): Promise<string[]>;
  /**
   * The initiator's message is on disk (a failing hook never loses it): context to add, or
   * why a hook blocked it. `firstInSession` also runs the SessionStart hooks.
   */
  promptSubmit(turn: HookTurn, text: string, firstInSession: boolean, signal: AbortSignal): Promise<{ readonly context: string[]; readonly block?: string }>;
  /** The agent's final message: a reason to go on (Stop, SubagentStop), or null. `active`: the turn already went on once for a stop hook. */
  stop(turn: HookTurn, active: boolean, signal: AbortSignal): Promise<string | null>;
}

/** After one call ran (nested instructions, PostToolUse hooks): texts for the agent with the batch's results. Never rejects. */
export type AfterCall = (turn: HookTurn & { readonly history: () => readonly Message[] }, call: { readonly toolName: string; readonly toolUseId: string; readonly input: unknown; readonly pathFields: readonly string[] }, result: ToolResult, signal: AbortSignal) => Promise<string[]>;

/**
 * Approval requests that wait outside this process (engine mode: on the workers,
 * docs/engine.md#approvals): the core lists them with its own and sends a decision on one back
 * to where it waits.
 */
export interface ApprovalsElsewhere {
  pending(): PendingApproval[];
  holds(requestId: string): boolean;
  /** Send a decision; one the holder refuses is said later, as a notice. */
  decide(requestId: string, decision: 'approved' | 'rejected', options: { reason?: string; allowForSession?: boolean; by?: RemoteActor }): void;
}

/**
 * An answer to an approval request sent to an agent up the chain whose turn runs in another
 * invocation (docs/engine.md#approvals-across-objects): its decision, or `climb` (it left the
 * request undecided when its turn ended: the asker's core sends it to the next approver).
 */
export type RemoteAnswer =
  | { readonly kind: 'decision'; readonly decision: 'approved' | 'rejected'; readonly reason?: string }
  | { readonly kind: 'climb' };

/**
 * Engine mode on a worker: approval requests between the cores of a delegation chain, each turn
 * an invocation of its own (docs/engine.md#approvals-across-objects). In-process the router hands
 * a request to the communicator call through which its approver waits (approval-route.ts); here
 * that call may wait in another invocation.
 */
export interface ApprovalsAcross {
  /**
   * The asker's side: send `request` to its approver when that agent's turn waits, in another
   * invocation, on a call up `asker`'s chain; false when none does (the request climbs). Its
   * answer comes back through `answered`; `superseded` names the request an earlier attempt of
   * the asker's turn raised for the same call (the turn was replayed: this one replaces it).
   */
  upstream(asker: Turn, request: ApprovalRequest, handlers: { answered(answer: RemoteAnswer): void; superseded(requestId: string): void }): boolean;
  /** The approver's side: a request a delegate running elsewhere sent to this core's agent, while it waits for an answer. */
  held(requestId: string): ApprovalRequest | undefined;
  /**
   * Whether `requestId` was sent here from elsewhere (held, answered, or withdrawn with its
   * delegate's turn): such a request is never decided or climbed through this core's queue,
   * which may hold a stale copy read from disk.
   */
  knows(requestId: string): boolean;
  /** Decide a held request (`resolve_approval` in the tool call `toolUseId`): the answer goes back once that call is journaled. */
  decide(requestId: string, answer: RemoteAnswer & { kind: 'decision' }, toolUseId: string): void;
  /** Send a held request on to the next approver (its approver's turn ended leaving it undecided). */
  climb(requestId: string): void;
}
