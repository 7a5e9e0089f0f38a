import type { Message } from '../model/message';
import { chooseFirstKept } from './cut';
import { tokensOfRange, tokensOfText } from './estimate';
import { applyRecord, type CompactionRecord, type ContextRecord, type ContextState, type EvictionRecord } from './records';
import { SUMMARY_SYSTEM_PROMPT, summaryChunks, summaryRequestText } from './summary';
import { requestView } from './view';

/** The `context.*` settings a compaction uses (docs/context.md). */
export interface ContextSettings {
  readonly compactAt: number;
  readonly keepRecent: number;
  readonly evictToolResultsOver: number;
}

/** One summary request: no tools are offered. Never throws. */
export type Summarize = (
  request: { system: string; text: string; maxTokens: number },
  signal: AbortSignal,
) => Promise<{ ok: true; text: string } | { ok: false; error: string; aborted?: boolean }>;

export interface CompactInput {
  readonly messages: readonly Message[];
  readonly state: ContextState;
  readonly window: number;
  readonly settings: ContextSettings;
  /** Estimated tokens of the request's fixed part (system prompt, tool definitions). */
  readonly fixedTokens: number;
  /** The request's estimated size now. */
  readonly tokensBefore: number;
  /** After a "prompt is too long" error: keep half as much, and always summarize when possible. */
  readonly harder: boolean;
  /** Summarize the older part even when eviction was enough (the user asked to compact now). */
  readonly always?: boolean;
  readonly who: { initiator: string; responder: string; session: string };
  readonly now: () => string;
  /** Called with each record as soon as it is decided (the caller appends it to the session file). */
  readonly commit: (record: ContextRecord) => void;
  readonly summarize: Summarize;
  readonly signal: AbortSignal;
}

export type CompactOutcome =
  | { kind: 'done'; state: ContextState; tokensAfter: number; records: ContextRecord[] }
  /** Summary failed or was cancelled: whatever eviction was done stands (already committed). */
  | { kind: 'failed'; state: ContextState; tokensAfter: number; records: ContextRecord[]; error: string; aborted: boolean };

/** Estimated tokens of the request the state produces. O(messages sent). */
export function viewTokens(messages: readonly Message[], state: ContextState, settings: ContextSettings, fixedTokens: number): number {
  const view = requestView(messages, state, settings.evictToolResultsOver);
  return fixedTokens + tokensOfRange(view, 0, view.length);
}

/**
 * Compact a session's request, cheapest first (docs/context.md, "Compaction"):
 * 1. evict: tool results older than the recent part become stubs; enough when the request
 *    falls to the middle of `keepRecent` and `compactAt`;
 * 2. summarize the messages before the recent part (in chunks that each fit the window,
 *    folding in the previous summary), in requests with no tools; the recent part (at most
 *    `keepRecent` of the window, cut where no tool pair is split) stays verbatim.
 * Each step is committed (appended) as soon as it is decided; nothing is ever deleted.
 */
export async function compact(input: CompactInput): Promise<CompactOutcome> {
  const { messages, settings, window, fixedTokens, harder } = input;
  let keepTokens = Math.max(1, Math.floor(settings.keepRecent * window * (harder ? 0.5 : 1)) - fixedTokens);
  // On request: at most the recent half of the history stays verbatim, however roomy the window.
  if (input.always) keepTokens = Math.max(1, Math.min(keepTokens, Math.floor((input.tokensBefore - fixedTokens) / 2)));
  const target = Math.floor(((settings.compactAt + settings.keepRecent) / 2) * window * (harder ? 0.7 : 1));
  const records: ContextRecord[] = [];
  let state = input.state;
  let tokens = input.tokensBefore;
  const boundary = chooseFirstKept(messages, state.firstKept, keepTokens);

  if (boundary > state.evictBefore) {
    const next = applyRecord(state, { type: 'eviction', at: '', before: boundary, tokensBefore: 0, tokensAfter: 0 }, messages.length);
    const after = viewTokens(messages, next, settings, fixedTokens);
    if (after < tokens) {
      const record: EvictionRecord = { type: 'eviction', at: input.now(), before: boundary, tokensBefore: tokens, tokensAfter: after };
      input.commit(record);
      records.push(record);
      state = next;
      tokens = after;
    }
  }
  if (tokens <= target && !input.always) return { kind: 'done', state, tokensAfter: tokens, records };
  if (boundary <= state.firstKept) return lastResort();
  // On request, a summary of one message is not worth a model call.
  if (input.always && boundary - state.firstKept < 2) return { kind: 'done', state, tokensAfter: tokens, records };

  // The summarizer's budget: its input chunks and its answer must fit the window together.
  const summaryMax = Math.max(256, Math.floor(((settings.compactAt - settings.keepRecent) / 2) * window));
  const chunkTokens = Math.max(512, Math.floor(window * 0.5) - tokensOfText(SUMMARY_SYSTEM_PROMPT) - summaryMax);
  const speakers = { user: input.who.initiator, assistant: input.who.responder };
  let summary = state.summary;
  for (const chunk of summaryChunks(messages, state.firstKept, boundary, chunkTokens, speakers)) {
    const text = summaryRequestText(summary, chunk, input.who) + `\n\nKeep the summary under ${Math.floor(summaryMax * 0.6)} words.`;
    const answer = await input.summarize({ system: SUMMARY_SYSTEM_PROMPT, text, maxTokens: summaryMax }, input.signal);
    if (!answer.ok) return { kind: 'failed', state, tokensAfter: tokens, records, error: answer.error, aborted: answer.aborted === true };
    if (answer.text.trim() === '') return { kind: 'failed', state, tokensAfter: tokens, records, error: 'the summary came back empty', aborted: false };
    summary = answer.text.trim();
  }
  if (input.signal.aborted) return { kind: 'failed', state, tokensAfter: tokens, records, error: 'aborted', aborted: true };
  const provisional: CompactionRecord = { type: 'compaction', at: input.now(), summary: summary ?? '', firstKept: boundary, tokensBefore: input.tokensBefore, tokensAfter: 0 };
  const next = applyRecord(state, provisional, messages.length);
  const after = viewTokens(messages, next, settings, fixedTokens);
  const record: CompactionRecord = { ...provisional, tokensAfter: after };
  input.commit(record);
  records.push(record);
  state = next;
  tokens = after;
  return harder && tokens > target ? lastResort() : { kind: 'done', state, tokensAfter: tokens, records };

  /**
   * After a "prompt is too long" error, when the recent part alone is too big (a huge tool
   * result in the last messages): every long tool result becomes a stub, recent ones included,
   * so the session stays usable.
   */
  function lastResort(): CompactOutcome {
    if (!harder || state.evictBefore >= messages.length) return { kind: 'done', state, tokensAfter: tokens, records };
    const next = applyRecord(state, { type: 'eviction', at: '', before: messages.length, tokensBefore: 0, tokensAfter: 0 }, messages.length);
    const after = viewTokens(messages, next, settings, fixedTokens);
    const record: EvictionRecord = { type: 'eviction', at: input.now(), before: messages.length, tokensBefore: tokens, tokensAfter: after };
    input.commit(record);
    records.push(record);
    return { kind: 'done', state: next, tokensAfter: after, records };
  }
}
