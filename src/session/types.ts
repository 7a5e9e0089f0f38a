import type { Message, ToolUseBlock } from '../model/message';
import type { JsonlIssue } from '../storage/jsonl';
import type { ContextRecord } from '../context/records';

/** `runs/<runId>/run.json` (versioned). */
export interface RunRecord {
  readonly version: 1;
  readonly id: string;
  readonly createdAt: string;
  updatedAt: string;
  /** First user message of the run, shortened: shown by `legion runs` and the history browser. */
  title?: string;
}

/** The three parts of a session id `session-{initiatorId}__{responderId}__{name}`. */
export interface SessionKey {
  readonly initiatorId: string;
  readonly responderId: string;
  readonly name: string;
}

/**
 * One session's persisted history. `append` writes one JSONL line synchronously before it
 * returns (append-only; cost independent of history length) and checks the history
 * invariant (docs/design.md#message-format) for what it appends (a result must answer a tool_use of the previous message).
 */
export interface SessionHandle {
  readonly id: string;
  readonly key: SessionKey;
  /** A live, read-only view of the history (not a copy). */
  messages(): readonly Message[];
  append(message: Message): void;
  lastActivity(): string;
  /** Its compaction and eviction records (docs/context.md), oldest first; a live view. */
  contextRecords(): readonly ContextRecord[];
  /** Append one context record (one line, synchronously); messages are never touched. */
  appendContext(record: ContextRecord): void;
}

/** The sessions of one run, read by `RunStore.load` from `runs/<runId>/sessions/*.jsonl`, histories in memory. */
export interface SessionStore {
  readonly runId: string;
  /** Existing session or a new one (the file is created on first append). `created` tells which. */
  open(key: SessionKey): { session: SessionHandle; created: boolean };
  get(sessionId: string): SessionHandle | undefined;
  list(): SessionHandle[];
}

/** What loading a run found: sessions (repaired), and issues to report as notices. */
export interface LoadedRun {
  readonly run: RunRecord;
  readonly sessions: SessionStore;
  /** Torn tails dropped, broken lines skipped, repairs appended. */
  readonly issues: readonly JsonlIssue[];
  readonly repairs: readonly { sessionId: string; answered: string[] }[];
  /**
   * Sessions left open on purpose (`LoadOptions.leaveOpen`): their last message is an assistant
   * message whose tool_uses have no results yet, because the core resumes that turn.
   */
  readonly leftOpen?: readonly OpenCalls[];
}

/** The unanswered tool calls that end a session's history (its last message). */
export interface OpenCalls {
  readonly sessionId: string;
  readonly key: SessionKey;
  /** The tool_use ids of the last (assistant) message, in order. */
  readonly toolUseIds: readonly string[];
  /** Those tool_use blocks. */
  readonly uses: readonly ToolUseBlock[];
}

export interface LoadOptions {
  /**
   * Asked once with every session that ends with unanswered tool calls; the ids it returns are
   * left open (no "interrupted" results appended; see `LoadedRun.leftOpen`) because the caller
   * resumes those turns. Default: every session is repaired.
   */
  readonly leaveOpen?: (open: readonly OpenCalls[]) => ReadonlySet<string>;
  /** Another process writes the session files: appends stay in memory (engine mode's hub, docs/engine.md). */
  readonly writtenElsewhere?: boolean;
}

/** Runs of a workspace. */
export interface RunStore {
  create(now: Date): Promise<RunRecord>;
  latest(): Promise<RunRecord | null>;
  get(runId: string): Promise<RunRecord | null>;
  list(): Promise<RunRecord[]>;
  save(run: RunRecord): Promise<void>;
  /**
   * Load every session of the run, repairing histories (appends only; a torn tail is cut).
   * The caller must hold the run lock (`acquireRunLock`) first. `options.leaveOpen` spares
   * sessions whose open tool calls the caller will resume.
   */
  load(run: RunRecord, now: Date, options?: LoadOptions): Promise<LoadedRun>;
}

/** An exclusive lock on driving a run (`runs/<runId>/lock`, pid + host + time; stale when the pid is gone). */
export interface RunLock {
  release(): void;
}
/** Who held or holds a run lock (the content of the lock file). */
export interface LockHolder {
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: string;
}
/**
 * `recovered`: a stale lock (its process gone, or the file unreadable) was taken over;
 * `previous` is its holder when the file could be read. Report it as a notice.
 */
export type LockResult =
  | { ok: true; lock: RunLock; recovered?: boolean; previous?: LockHolder }
  | { ok: false; error: string };
