import React, { useCallback } from 'react';
import type { KeyPress } from '../input/decode-keys';
import type { Draft, SessionView } from '../state/ui-state';
import type { Line } from '../text/line';
import { statusText } from '../format';
import { cellWidth } from '../text/width';
import type { ModalProps } from './modal-api';
import { useModalKeys } from './modal-api';
import { filterSessions, highlightWords } from './switcher-filter';
import { closeAndShow } from './switcher-show';
import { ModalFrame, age, editField, emptyField, fieldSpans, innerSize, listStep, listWindow, marker, pad, selectStyle, useLatest, useSyncState } from './switcher-kit';

/**
 * The session switcher (docs/design.md#the-tui, Ctrl+P): every session of the run with its participants,
 * name, status and last activity, most recent first. Typing filters (switcher-filter.ts);
 * ↑ ↓ PgUp PgDn move; Enter shows the session in a lane and focuses it; Esc closes.
 */
interface Local {
  readonly query: Draft;
  readonly selected: string | null;
}

function rankedSessions(sessions: Readonly<Record<string, SessionView>>, query: string): SessionView[] {
  return filterSessions(Object.values(sessions), query).map((r) => r.item);
}

export function SessionSwitcher(props: ModalProps) {
  const { state, theme, width, height } = props;
  const [get, set] = useSyncState<Local>(() => ({ query: emptyField(), selected: null }));
  const latest = useLatest(props);
  const inner = innerSize(theme, width, height);
  const rows = Math.max(1, inner.height - 4);

  const onKey = useCallback((key: KeyPress): boolean => {
    const local = get();
    const list = rankedSessions(latest.current.state.sessions, local.query.text);
    const at = Math.max(0, list.findIndex((s) => s.id === local.selected));
    const step = listStep(key.name, rows);
    if (step !== undefined) {
      if (list.length > 0) set({ ...local, selected: list[Math.min(list.length - 1, Math.max(0, at + step))]!.id });
      return true;
    }
    switch (key.name) {
      case 'enter': {
        const chosen = list[at];
        if (chosen) closeAndShow(latest.current.store, chosen.id);
        return true;
      }
      case 'escape': return false;
      default: {
        const edit = editField(local.query, key);
        if (!edit.used) return false;
        // A new filter starts at the best match.
        set({ query: edit.field, selected: edit.field.text === local.query.text ? local.selected : null });
        return true;
      }
    }
  }, [get, set, latest, rows]);
  useModalKeys(onKey);

  const local = get();
  const query = local.query.text;
  const list = rankedSessions(state.sessions, query);
  const at = Math.max(0, list.findIndex((s) => s.id === local.selected));
  const total = Object.keys(state.sessions).length;
  const now = new Date();
  const labelOf = (s: SessionView): string => `${s.initiatorId} ${theme.arrow} ${s.responderId} ${theme.dot} ${s.name}`;
  const labelWidth = Math.min(Math.max(16, ...list.map((s) => cellWidth(labelOf(s)))), Math.floor(inner.width / 2));
  const lines: Line[] = [
    [{ text: 'Sessions', bold: true, tone: 'heading' }, { text: ` ${theme.dot} ${query ? `${list.length} of ${total}` : `${total}`}`, tone: 'muted' }],
    [{ text: 'Filter: ', tone: 'muted' }, ...fieldSpans(local.query, true, 'type participant or session name')],
    [],
  ];
  const { start, end } = listWindow(list.length, at, rows);
  for (let i = start; i < end; i++) {
    const s = list[i]!;
    const selected = i === at;
    const lane = state.lanes.indexOf(s.id);
    const messages = s.entries.filter((e) => e.role !== 'notice' && e.role !== 'compaction').length;
    const row: Line = [
      marker(theme, selected),
      ...highlightWords(pad(labelOf(s), labelWidth), query, { bold: s.initiatorId === 'user' }),
      { text: `  ${pad(statusText(s.status, s.detail), 18)}`, tone: s.status === 'error' ? 'error' : s.status === 'idle' ? 'muted' : 'accent' },
      { text: ` ${pad(age(s.lastActivity, now), 8)}`, tone: 'muted' },
      { text: ` ${pad(`${messages} msg${messages === 1 ? '' : 's'}`, 9)}`, tone: 'muted' },
      { text: lane === -1 ? '' : ` lane ${lane + 1}`, tone: 'muted' },
    ];
    lines.push(selectStyle(theme, row, selected));
  }
  if (list.length === 0) lines.push([{ text: total === 0 ? 'No sessions yet.' : 'No session matches.', tone: 'muted' }]);
  while (lines.length < inner.height - 1) lines.push([]);
  lines.push([{ text: '↑↓ move · Enter show in a lane · type to filter · Esc close', tone: 'muted' }]);
  return <ModalFrame theme={theme} width={width} height={height} lines={lines} />;
}
