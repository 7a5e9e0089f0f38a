import React, { useCallback, useEffect, useRef } from 'react';
import type { HistorySearchResult, TranscriptLine } from '../../src/runtime/core-api';
import type { KeyPress } from '../input/decode-keys';
import type { Draft } from '../state/ui-state';
import type { Line, Span } from '../text/line';
import { draftOf } from '../composer/draft-edit';
import { cellWidth } from '../text/width';
import type { ModalProps } from './modal-api';
import { useModalKeys } from './modal-api';
import type { HistorySource, RunSummary, SessionSummary } from './history-source';
import { highlighted, transcriptRows } from './history-view';
import { sessionLabel } from './switcher-filter';
import { closeAndShow } from './switcher-show';
import { ModalFrame, age, editField, fieldSpans, innerSize, listStep, listWindow, marker, pad, selectStyle, useLatest, useSyncState } from './switcher-kit';

/**
 * The history browser (docs/design.md#the-tui, Ctrl+O): runs → sessions → transcript. Enter (or →) goes
 * one level down; ← or Backspace one level up. `/` searches the transcripts of the run in
 * view (on the runs list: the highlighted run) and lists the hits, highlighted; Enter on a
 * hit shows the transcript at that line, `n` / `N` jump between hits there. In a transcript,
 * Enter opens the session in a lane (`o` does it from the sessions list): a session of the
 * current run at once; one of an older run resumes that run through the source's
 * `switchRun` (start-tui: the current run is closed, its work kept) — without it, older runs
 * are read-only here. Esc closes (while typing a search: back to the list).
 */
type Level = 'runs' | 'sessions' | 'transcript' | 'hits';

interface Local {
  readonly level: Level;
  readonly runs: readonly RunSummary[] | null;
  readonly runIndex: number;
  readonly runId: string | null;
  readonly sessions: readonly SessionSummary[] | null;
  readonly sessionIndex: number;
  readonly transcript: { readonly sessionId: string; readonly lines: readonly TranscriptLine[] } | null;
  /** The session of the transcript level, known before its lines have loaded. */
  readonly transcriptSessionId: string | null;
  /** First transcript row shown. */
  readonly top: number;
  /** Where ← from the transcript goes. */
  readonly back: 'sessions' | 'hits';
  readonly searching: boolean;
  readonly field: Draft;
  /** The query of the hits (highlighted in transcripts). */
  readonly query: string;
  readonly hits: HistorySearchResult | null;
  readonly hitIndex: number;
  readonly hitsBack: Level;
  readonly note: { readonly level: 'info' | 'warn' | 'error'; readonly text: string } | null;
  readonly loading: string | null;
}

const INITIAL: Local = {
  level: 'runs', runs: null, runIndex: 0, runId: null, sessions: null, sessionIndex: 0, transcript: null, transcriptSessionId: null, top: 0, back: 'sessions',
  searching: false, field: draftOf(''), query: '', hits: null, hitIndex: 0, hitsBack: 'runs', note: null, loading: 'reading runs',
};

const clampIndex = (i: number, n: number): number => Math.max(0, Math.min(n - 1, i));

export function HistoryBrowser(props: ModalProps) {
  const { theme, width, height, history: source } = props;
  const [get, set] = useSyncState<Local>(() => INITIAL);
  const latest = useLatest(props);
  const token = useRef(0);
  const inner = innerSize(theme, width, height);
  const rows = Math.max(1, inner.height - 4);
  const update = useCallback((change: Partial<Local>) => set({ ...get(), ...change }), [get, set]);

  /** Run `work`; apply its result only if no newer request started meanwhile and still mounted. */
  const load = useCallback(<T,>(what: string, work: () => Promise<T>, done: (value: T) => Partial<Local>) => {
    const mine = ++token.current;
    update({ loading: what, note: null });
    work().then(
      (value) => { if (token.current === mine) update({ ...done(value), loading: null }); },
      (error: unknown) => { if (token.current === mine) update({ loading: null, note: { level: 'error', text: `${what} failed: ${String((error as Error)?.message ?? error)}` } }); },
    );
  }, [update]);
  useEffect(() => {
    load('reading runs', () => source.runs(), (runs) => ({ runs, runIndex: Math.max(0, runs.findIndex((r) => r.id === source.currentRunId)) }));
    return () => { token.current = -1; };
  }, [source, load]);

  const rowsOf = useCallback((lines: readonly TranscriptLine[], query: string) =>
    transcriptRows(lines, innerSize(latest.current.theme, latest.current.width, latest.current.height).width, query, latest.current.theme), [latest]);

  const openSessions = useCallback((runId: string) => {
    update({ level: 'sessions', runId, sessions: null, sessionIndex: 0 });
    load('reading sessions', () => source.runSessions(runId), (sessions) => ({ sessions }));
  }, [update, load, source]);

  const openTranscript = useCallback((runId: string, sessionId: string, back: 'sessions' | 'hits', line: number | null) => {
    update({ level: 'transcript', runId, transcript: null, transcriptSessionId: sessionId, top: 0, back });
    load('reading the transcript', () => source.transcript(runId, sessionId), (lines) => {
      if (line === null) return { transcript: { sessionId, lines } };
      const start = rowsOf(lines, get().query).lineStart[line] ?? 0;
      return { transcript: { sessionId, lines }, top: Math.max(0, start - 2) };
    });
  }, [update, load, source, rowsOf, get]);

  const openInLane = useCallback((runId: string, sessionId: string) => {
    const { store, close } = latest.current;
    if (runId === source.currentRunId) return closeAndShow(store, sessionId);
    if (source.switchRun) {
      close();
      store.dispatch({ type: 'flash', flash: { level: 'info', text: `resuming run ${runId}…` } });
      source.switchRun(runId, sessionId);
      return;
    }
    update({ note: { level: 'warn', text: `run ${runId} is read-only here: resume it with \`legion --run ${runId}\`` } });
  }, [latest, source, update]);

  const search = useCallback((runId: string, query: string, from: Level) => {
    update({ searching: false, query, level: 'hits', hits: null, hitIndex: 0, hitsBack: from === 'hits' ? get().hitsBack : from, runId });
    load(`searching "${query}"`, () => source.searchHistory(runId, query), (hits) => ({ hits }));
  }, [update, load, source, get]);

  const onKey = useCallback((key: KeyPress): boolean => {
    const local = get();
    if (local.searching) {
      if (key.name === 'escape') { update({ searching: false }); return true; }
      if (key.name === 'enter') {
        const q = local.field.text.trim();
        const runId = local.level === 'runs' ? local.runs?.[local.runIndex]?.id : local.runId;
        if (q && runId) search(runId, q, local.level);
        else update({ searching: false });
        return true;
      }
      const edit = editField(local.field, key);
      if (edit.used) update({ field: edit.field });
      return true;
    }
    // The field keeps its text (the last query, or what was typed before Esc).
    if (key.name === '/') { update({ searching: true, note: null }); return true; }
    if (key.name === 'escape') return false;
    const step = (n: number, index: number, delta: number): number => clampIndex(index + delta, n);
    const delta = listStep(key.name, rows) ?? (key.name === 'home' ? -1e9 : key.name === 'end' ? 1e9 : 0);
    const down = key.name === 'enter' || key.name === 'right';
    const up = key.name === 'left' || key.name === 'backspace';
    switch (local.level) {
      case 'runs': {
        const runs = local.runs ?? [];
        if (delta) { update({ runIndex: step(runs.length, local.runIndex, delta), note: null }); return true; }
        if (down && runs[local.runIndex]) { openSessions(runs[local.runIndex]!.id); return true; }
        return up;
      }
      case 'sessions': {
        const sessions = local.sessions ?? [];
        const chosen = sessions[local.sessionIndex];
        if (delta) { update({ sessionIndex: step(sessions.length, local.sessionIndex, delta), note: null }); return true; }
        if (down && chosen && local.runId) { openTranscript(local.runId, chosen.id, 'sessions', null); return true; }
        if (key.name === 'o' && chosen && local.runId) { openInLane(local.runId, chosen.id); return true; }
        if (up) { update({ level: 'runs', note: null }); return true; }
        return false;
      }
      case 'hits': {
        const hits = local.hits?.hits ?? [];
        if (delta) { update({ hitIndex: step(hits.length, local.hitIndex, delta) }); return true; }
        const hit = hits[local.hitIndex];
        if (down && hit && local.runId) { openTranscript(local.runId, hit.sessionId, 'hits', hit.lineIndex); return true; }
        if (up) { update({ level: local.hitsBack === 'transcript' ? 'sessions' : local.hitsBack, note: null }); return true; }
        return false;
      }
      case 'transcript': {
        if (!local.transcript) {
          // Enter works before the lines have loaded: the session is already known.
          if (key.name === 'enter' && local.runId && local.transcriptSessionId) { openInLane(local.runId, local.transcriptSessionId); return true; }
          return up ? (update({ level: local.back }), true) : false;
        }
        const { rows: all, lineStart } = rowsOf(local.transcript.lines, local.query);
        const maxTop = Math.max(0, all.length - rows);
        if (delta) { update({ top: Math.max(0, Math.min(maxTop, local.top + delta)) }); return true; }
        if ((key.name === 'n' || key.name === 'N') && local.query) {
          const lines = local.transcript.lines;
          const pattern = local.query.toLowerCase();
          const starts = lines.map((l, i) => (l.text.toLowerCase().includes(pattern) ? lineStart[i]! : -1)).filter((r) => r >= 0);
          const cursor = local.top + 2;
          const next = key.name === 'n' ? starts.find((r) => r > cursor) : [...starts].reverse().find((r) => r < cursor);
          if (next !== undefined) update({ top: Math.max(0, Math.min(maxTop, next - 2)) });
          return true;
        }
        if (key.name === 'enter' && local.runId) { openInLane(local.runId, local.transcript.sessionId); return true; }
        if (up) { update({ level: local.back, note: null }); return true; }
        return false;
      }
      default: {
        const never: never = local.level;
        return never;
      }
    }
  }, [get, update, rows, search, openSessions, openTranscript, openInLane, rowsOf]);
  useModalKeys(onKey);

  const local = get();
  const lines = body(local, source, theme, inner.width, rows, rowsOf);
  return <ModalFrame theme={theme} width={width} height={height} lines={lines} />;
}

function body(local: Local, source: HistorySource, theme: ModalProps['theme'], cells: number, rows: number,
  rowsOf: (lines: readonly TranscriptLine[], query: string) => { rows: readonly Line[] }): Line[] {
  const now = new Date();
  const runLabel = (id: string | null): string => (id === null ? '' : id === source.currentRunId ? `run ${id} (current)` : `run ${id}`);
  const head: Span[] = [{ text: 'History', bold: true, tone: 'heading' }];
  const list: Line[] = [];
  let keys = '';
  switch (local.level) {
    case 'runs': {
      head.push({ text: ` ${theme.dot} runs`, tone: 'muted' });
      const runs = local.runs ?? [];
      const { start, end } = listWindow(runs.length, local.runIndex, rows);
      for (let i = start; i < end; i++) {
        const r = runs[i]!;
        const selected = i === local.runIndex;
        const current = r.id === source.currentRunId;
        list.push(selectStyle(theme, [
          marker(theme, selected), { text: pad(r.createdAt.slice(0, 16).replace('T', ' '), 17), bold: current },
          { text: `  ${pad(`${r.sessionCount} session${r.sessionCount === 1 ? '' : 's'}`, 12)}`, tone: 'muted' },
          { text: `  ${r.title ?? '(untitled)'}` }, { text: current ? '  (current)' : '', tone: 'accent' },
        ], selected));
      }
      if (local.runs && runs.length === 0) list.push([{ text: 'No runs yet.', tone: 'muted' }]);
      keys = '↑↓ move · Enter sessions · / search this run · Esc close';
      break;
    }
    case 'sessions': {
      head.push({ text: ` ${theme.dot} ${runLabel(local.runId)}`, tone: 'muted' });
      const sessions = local.sessions ?? [];
      const labels = sessions.map((s) => sessionLabel(s.id, theme));
      const w = Math.min(Math.max(16, ...labels.map(cellWidth)), Math.floor(cells / 2));
      const { start, end } = listWindow(sessions.length, local.sessionIndex, rows);
      for (let i = start; i < end; i++) {
        const s = sessions[i]!;
        const selected = i === local.sessionIndex;
        list.push(selectStyle(theme, [
          marker(theme, selected), { text: pad(labels[i]!, w), bold: s.initiatorId === 'user' },
          { text: `  ${pad(`${s.messageCount} msg${s.messageCount === 1 ? '' : 's'}`, 9)}  ${age(s.lastActivity, now)}`, tone: 'muted' },
        ], selected));
      }
      if (local.sessions && sessions.length === 0) list.push([{ text: 'No sessions in this run.', tone: 'muted' }]);
      keys = '↑↓ move · Enter transcript · o open in lane · / search · ← back · Esc close';
      break;
    }
    case 'hits': {
      const result = local.hits;
      const count = result ? `${result.hits.length}${result.truncated ? '+' : ''} hit${result.hits.length === 1 ? '' : 's'}` : '';
      head.push({ text: ` ${theme.dot} "${local.query}" in ${runLabel(local.runId)}${count ? ` ${theme.dot} ${count}` : ''}`, tone: 'muted' });
      const hits = result?.hits ?? [];
      const labels = hits.map((h) => sessionLabel(h.sessionId, theme));
      const w = Math.min(Math.max(12, ...labels.map(cellWidth)), Math.floor(cells / 3));
      const { start, end } = listWindow(hits.length, local.hitIndex, rows);
      for (let i = start; i < end; i++) {
        const hit = hits[i]!;
        const selected = i === local.hitIndex;
        const text = hit.line.trimStart();
        list.push(selectStyle(theme, [marker(theme, selected), { text: pad(labels[i]!, w), tone: 'muted' }, { text: '  ' }, ...highlighted(text, local.query)], selected));
      }
      if (result && hits.length === 0) list.push([{ text: `No transcript of this run mentions "${local.query}".`, tone: 'muted' }]);
      keys = '↑↓ move · Enter show in the transcript · / search again · ← back · Esc close';
      break;
    }
    case 'transcript': {
      const id = local.transcript?.sessionId;
      head.push({ text: ` ${theme.dot} ${id ? sessionLabel(id, theme) : ''} ${theme.dot} ${runLabel(local.runId)}`, tone: 'muted' });
      if (local.runId !== source.currentRunId && !source.switchRun) head.push({ text: ' (read-only)', tone: 'warn' });
      if (local.transcript) {
        const all = rowsOf(local.transcript.lines, local.query).rows;
        const top = Math.min(local.top, Math.max(0, all.length - rows));
        list.push(...all.slice(top, top + rows));
      }
      const open = local.runId === source.currentRunId ? 'Enter open in lane' : source.switchRun ? 'Enter resume run' : '';
      keys = ['↑↓ PgUp PgDn', local.query ? 'n/N hit' : '', open, '/ search', '← back', 'Esc close'].filter(Boolean).join(' · ');
      break;
    }
    default: {
      const never: never = local.level;
      return never;
    }
  }
  const out: Line[] = [head, []];
  if (local.loading) out.push([{ text: `${local.loading}…`, tone: 'muted' }]);
  out.push(...list.slice(0, rows - (local.loading ? 1 : 0)));
  while (out.length < rows + 2) out.push([]);
  out.push(local.note ? [{ text: local.note.text, tone: local.note.level === 'info' ? 'accent' : local.note.level }] : []);
  out.push(local.searching ? [{ text: '/ ', tone: 'accent', bold: true }, ...fieldSpans(local.field, true, 'search the transcripts (Enter search, Esc back)')] : [{ text: keys, tone: 'muted' }]);
  return out;
}
