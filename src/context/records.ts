import { z } from 'zod';

/**
 * The context lines of a session file (docs/context.md), appended beside its messages and
 * never rewritten. Both carry message indexes into the session's full history (messages
 * only; these lines are not messages and do not count).
 *
 * - `compaction`: the messages before `firstKept` are replaced, in what the model is sent, by
 *   `summary`. `tokensBefore`/`tokensAfter`: the estimated request size around it.
 * - `eviction`: tool results of the messages before `before` longer than
 *   `context.evictToolResultsOver` characters are sent as a short stub.
 */
export interface CompactionRecord {
  readonly type: 'compaction';
  readonly at: string;
  readonly summary: string;
  readonly firstKept: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}
export interface EvictionRecord {
  readonly type: 'eviction';
  readonly at: string;
  readonly before: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}
export type ContextRecord = CompactionRecord | EvictionRecord;

const count = z.number().int().min(0);
/**
 * The one shape of a context record wherever one crosses a trust boundary: a session file read
 * back from disk, and the server's answers (`snapshot`, `contextRecords`) an attached client reads.
 */
export const contextRecordSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('compaction'), at: z.string(), summary: z.string(), firstKept: count, tokensBefore: count, tokensAfter: count }),
  z.object({ type: z.literal('eviction'), at: z.string(), before: count, tokensBefore: count, tokensAfter: count }),
]);

/** True for a parsed JSON line that claims to be a context record (its `type` says so). */
export function isContextLine(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const type = (value as { type?: unknown }).type;
  return type === 'compaction' || type === 'eviction';
}

/** Validate a context line read back from disk (a trust boundary: files can be edited by hand). */
export function validateContextRecord(value: unknown): { ok: true; value: ContextRecord } | { ok: false; error: string } {
  const result = contextRecordSchema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const first = result.error.issues[0];
  return { ok: false, error: `not a context record: ${first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'invalid'}` };
}

/** What the model is sent of a session, as the records so far decide it. */
export interface ContextState {
  /** The latest summary, standing for the messages before `firstKept`. */
  readonly summary: string | null;
  readonly firstKept: number;
  /** Tool results of messages before this index are sent as stubs when long. */
  readonly evictBefore: number;
  /** Compactions so far (summaries), for the lane's and the transcript's marks. */
  readonly compactions: number;
}

export const EMPTY_CONTEXT: ContextState = { summary: null, firstKept: 0, evictBefore: 0, compactions: 0 };

/**
 * Fold one record into the state. Indexes past `messageCount` (a hand-edited or foreign file)
 * are clamped, so the state always describes a history that exists.
 */
export function applyRecord(state: ContextState, record: ContextRecord, messageCount: number): ContextState {
  if (record.type === 'compaction') {
    const firstKept = Math.min(Math.max(record.firstKept, state.firstKept), messageCount);
    return { summary: record.summary, firstKept, evictBefore: Math.max(state.evictBefore, firstKept), compactions: state.compactions + 1 };
  }
  return { ...state, evictBefore: Math.min(Math.max(state.evictBefore, record.before), messageCount) };
}

export function stateOf(records: readonly ContextRecord[], messageCount: number): ContextState {
  return records.reduce((state, record) => applyRecord(state, record, messageCount), EMPTY_CONTEXT);
}
