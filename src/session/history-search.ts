import type { KeyArgumentOf } from '../tools/key-argument';
import type { Layout } from '../storage/layout';
import type { Message } from '../model/message';
import { readRunSessions } from './session-files';
import { transcriptLines, type TranscriptLine } from './transcript';
import type { SessionKey } from './types';

/**
 * Search across a run's transcripts (the history browser's `/`). The haystack is what the
 * browser shows: the transcript lines of `transcriptLines` (message text line by line, tool
 * calls with their key argument, folded results, speakers), so every hit can be shown and
 * highlighted where it stands. Case-insensitive (Unicode case folding), literal (no regex
 * syntax). Reads the session files only; never writes, so it is safe on the live run and on
 * runs another process holds.
 */
export interface HistoryHit {
  readonly sessionId: string;
  /** Index of the message in the session's history (-1: the transcript header). */
  readonly messageIndex: number;
  /** Index into `transcriptLines(key, messages)` of the session. */
  readonly lineIndex: number;
  /** The matching transcript line, as shown. */
  readonly line: string;
  /** Where the matches are in `line`: [start, end) UTF-16 offsets, in order. */
  readonly ranges: readonly (readonly [number, number])[];
}

export interface HistorySearchResult {
  readonly hits: readonly HistoryHit[];
  /** True when more than `maxHits` lines matched (the rest are left out). */
  readonly truncated: boolean;
  readonly sessionsSearched: number;
}

export const DEFAULT_MAX_HITS = 500;

/** A case-insensitive literal matcher; null for an empty (or blank) query. */
export function queryPattern(query: string): RegExp | null {
  const q = query.trim();
  if (q === '') return null;
  return new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'giu');
}

/** The match ranges of `pattern` in `line` (empty when none). */
export function matchRanges(line: string, pattern: RegExp | null): [number, number][] {
  if (!pattern) return [];
  const out: [number, number][] = [];
  pattern.lastIndex = 0;
  for (let m = pattern.exec(line); m !== null; m = pattern.exec(line)) {
    if (m[0].length === 0) { pattern.lastIndex += 1; continue; }
    out.push([m.index, m.index + m[0].length]);
  }
  return out;
}

/** Search one session's transcript lines (in memory). */
export function searchTranscript(sessionId: string, lines: readonly TranscriptLine[], query: string, limit = Infinity): HistoryHit[] {
  const pattern = queryPattern(query);
  if (!pattern) return [];
  const hits: HistoryHit[] = [];
  lines.forEach((line, lineIndex) => {
    if (hits.length >= limit || line.kind === 'blank') return;
    const ranges = matchRanges(line.text, pattern);
    if (ranges.length > 0) hits.push({ sessionId, messageIndex: line.messageIndex, lineIndex, line: line.text, ranges });
  });
  return hits;
}

/** Search every session of a run, sessions in id order, lines in transcript order. */
export async function searchRunHistory(
  layout: Layout,
  runId: string,
  query: string,
  keyOf: KeyArgumentOf,
  options: { readonly maxHits?: number } = {},
): Promise<HistorySearchResult> {
  const max = options.maxHits ?? DEFAULT_MAX_HITS;
  if (queryPattern(query) === null) return { hits: [], truncated: false, sessionsSearched: 0 };
  const { sessions } = await readRunSessions(layout, runId);
  return searchSessions(sessions.map((s) => ({ id: s.id, key: s.key, messages: s.messages })), query, keyOf, max);
}

/** The same search over sessions already in memory. */
export function searchSessions(
  sessions: readonly { readonly id: string; readonly key: SessionKey; readonly messages: readonly Message[] }[],
  query: string,
  keyOf: KeyArgumentOf,
  maxHits = DEFAULT_MAX_HITS,
): HistorySearchResult {
  const hits: HistoryHit[] = [];
  let truncated = false;
  for (const session of sessions) {
    const found = searchTranscript(session.id, transcriptLines(session.key, session.messages, keyOf), query, maxHits + 1 - hits.length);
    hits.push(...found);
    if (hits.length > maxHits) {
      hits.length = maxHits;
      truncated = true;
      break;
    }
  }
  return { hits, truncated, sessionsSearched: sessions.length };
}
