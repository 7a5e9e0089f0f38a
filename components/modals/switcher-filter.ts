import type { Theme } from '../theme';
import type { Span } from '../text/line';
import { parseSessionId } from '../state/lanes';
import type { SessionView } from '../state/ui-state';

/**
 * Filtering for the session switcher (and the new-session completion): a query is split on
 * spaces; every word must occur in `initiator responder name` (case-insensitive), as a
 * substring or, failing that, as a subsequence (fuzzy: "usn" finds "user scribe notes").
 * Substring matches rank first, then the most recent activity.
 */
/** What the switcher knows of a session: the UI's own view of it (state/ui-state.ts), its entries aside. */
export type SwitcherSession = Pick<SessionView, 'id' | 'initiatorId' | 'responderId' | 'name' | 'status' | 'detail' | 'lastActivity'>;

export interface Ranked<T> {
  readonly item: T;
  /** Higher is better: 2 per word found as a substring, 1 per word found fuzzily. */
  readonly score: number;
}

/** Score of `query` against `hay` (both any case); null when some word does not match. */
export function matchScore(hay: string, query: string): number | null {
  const h = hay.toLowerCase();
  let score = 0;
  for (const word of query.toLowerCase().split(/\s+/).filter(Boolean)) {
    if (h.includes(word)) { score += 2; continue; }
    let at = 0;
    for (const ch of word) {
      at = h.indexOf(ch, at);
      if (at === -1) return null;
      at += 1;
    }
    score += 1;
  }
  return score;
}

export function haystackOf(s: Pick<SwitcherSession, 'initiatorId' | 'responderId' | 'name'>): string {
  return `${s.initiatorId} ${s.responderId} ${s.name}`;
}

export function filterSessions<T extends SwitcherSession>(sessions: readonly T[], query: string): Ranked<T>[] {
  const out: Ranked<T>[] = [];
  for (const item of sessions) {
    const score = matchScore(haystackOf(item), query);
    if (score !== null) out.push({ item, score });
  }
  return out.sort((a, b) => b.score - a.score || (a.item.lastActivity < b.item.lastActivity ? 1 : a.item.lastActivity > b.item.lastActivity ? -1 : 0) || (a.item.id < b.item.id ? -1 : 1));
}

/** Spans of `text` with every substring occurrence of the query's words emphasised. */
export function highlightWords(text: string, query: string, base: Omit<Span, 'text'> = {}): Span[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0 || text === '') return [{ ...base, text }];
  const hit = new Array<boolean>(text.length).fill(false);
  const lower = text.toLowerCase();
  if (lower.length !== text.length) return [{ ...base, text }];
  for (const w of words) {
    for (let i = lower.indexOf(w); i !== -1; i = lower.indexOf(w, i + 1)) hit.fill(true, i, i + w.length);
  }
  const spans: Span[] = [];
  let from = 0;
  for (let i = 1; i <= text.length; i++) {
    if (i === text.length || hit[i] !== hit[from]) {
      spans.push(hit[from] ? { ...base, text: text.slice(from, i), tone: 'warn', bold: true, underline: true } : { ...base, text: text.slice(from, i) });
      from = i;
    }
  }
  return spans;
}

/** `initiator → responder · name` of a session id (the id itself when it does not parse). */
export function sessionLabel(sessionId: string, theme: Pick<Theme, 'arrow' | 'dot'>): string {
  const key = parseSessionId(sessionId);
  return key ? `${key.initiatorId} ${theme.arrow} ${key.responderId} ${theme.dot} ${key.name}` : sessionId;
}
