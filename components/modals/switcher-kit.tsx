import React, { useCallback, useReducer, useRef } from 'react';
import { Box, Text } from 'ink';
import type { KeyPress } from '../input/decode-keys';
import type { Theme } from '../theme';
import type { Line, Span } from '../text/line';
import { lineToAnsi, sanitize } from '../text/ansi';
import { cellWidth, fitPrefix, truncate } from '../text/width';
import {
  backspace, deleteForward, deleteWordBack, insertText, killToLineEnd, killToLineStart, moveLeft, moveRight, draftOf,
} from '../composer/draft-edit';
import type { Draft } from '../state/ui-state';

/**
 * Shared pieces of the issue-7 modals (approval queue, switcher, new session, history):
 * the frame, fitting styled lines to a width, a window over a long list, and a one-line
 * text field. Pure except `ModalFrame`.
 */

/** Cells inside the frame: the border and padding take 4 columns and 2 rows (none in plain mode). */
export function innerSize(theme: Theme, width: number, height: number): { width: number; height: number } {
  return theme.plain ? { width: Math.max(10, width), height: Math.max(3, height) } : { width: Math.max(10, width - 4), height: Math.max(3, height - 2) };
}

/** A styled line cut to `cells` (text sanitized: model text never drives the terminal). */
export function fitLine(line: Line, cells: number): Line {
  const out: Span[] = [];
  let room = cells;
  for (const span of line) {
    if (room <= 0) break;
    const clean = sanitize(span.text).replace(/\n/g, ' ');
    const w = cellWidth(clean);
    if (w <= room) { out.push(clean === span.text ? span : { ...span, text: clean }); room -= w; continue; }
    out.push({ ...span, text: truncate(clean, room) });
    room = 0;
  }
  return out;
}

/** Styled text padded (or cut) to exactly `cells`. */
export function pad(text: string, cells: number): string {
  const t = truncate(sanitize(text).replace(/\n/g, ' '), cells);
  return t + ' '.repeat(Math.max(0, cells - cellWidth(t)));
}

/** The rows [start, end) of a `count`-row list shown in `rows` rows so that `selected` is visible (kept near the middle). */
export function listWindow(count: number, selected: number, rows: number): { start: number; end: number } {
  if (count <= rows) return { start: 0, end: count };
  const start = Math.min(Math.max(0, selected - Math.floor(rows / 2)), count - rows);
  return { start, end: start + rows };
}

/**
 * How far a key moves a list's selection or a view's scroll, `page` rows a page: up/down one,
 * page up/down a page; undefined for any other key (home and end are each modal's own).
 */
export function listStep(keyName: string, page: number): number | undefined {
  switch (keyName) {
    case 'up': return -1;
    case 'down': return 1;
    case 'pageup': return -page;
    case 'pagedown': return page;
    default: return undefined;
  }
}

/** A list row's marker: the focus mark on the selected row, else spaces of the same width. */
export function marker(theme: Theme, selected: boolean): Span {
  return { text: selected ? `${theme.focusMark} ` : ' '.repeat(cellWidth(theme.focusMark) + 1), tone: selected ? 'accent' : undefined, bold: selected };
}

/** Selected rows: inverse with colour, the focus mark alone without. */
export function selectStyle(theme: Theme, line: Line, selected: boolean): Line {
  if (!selected || !theme.color || theme.plain) return line;
  return line.map((s) => ({ ...s, inverse: true }));
}

/** Relative age of an ISO time: `now`, `5m`, `3h`, `2d`, else the date. */
export function age(iso: string, now: Date): string {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return '';
  const s = Math.max(0, Math.round((now.getTime() - t) / 1000));
  if (s < 60) return 'now';
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  if (s < 7 * 86400) return `${Math.floor(s / 86400)}d ago`;
  return iso.slice(0, 10);
}

export type FieldEdit = { readonly used: true; readonly field: Draft } | { readonly used: false };

/** Apply an editing key to a one-line field; `used: false` for keys it does not take. */
export function editField(field: Draft, key: KeyPress): FieldEdit {
  const done = (d: Draft): FieldEdit => ({ used: true, field: d });
  switch (key.name) {
    case 'backspace': return done(backspace(field));
    case 'delete': return done(deleteForward(field));
    case 'left': return done(moveLeft(field));
    case 'right': return done(moveRight(field));
    case 'ctrl+a': case 'home': return done({ ...field, cursor: 0 });
    case 'ctrl+e': case 'end': return done({ ...field, cursor: field.text.length });
    case 'ctrl+u': return done(killToLineStart(field));
    case 'ctrl+k': return done(killToLineEnd(field));
    case 'ctrl+w': return done(deleteWordBack(field));
    case 'space': return done(insertText(field, ' '));
    case 'text': case 'paste': {
      const text = key.text.replace(/[\r\n]+/g, ' ').replace(/[\x00-\x1f\x7f]/g, '');
      return text === '' ? { used: true, field } : done(insertText(field, text));
    }
    default:
      if ([...key.name].length === 1 && key.text === key.name) return done(insertText(field, key.text));
      return { used: false };
  }
}

export const emptyField = (): Draft => draftOf('');

/** A field as spans, the cursor shown as an inverse cell when `focused`. */
export function fieldSpans(field: Draft, focused: boolean, placeholder = ''): Span[] {
  if (field.text === '' && !focused) return [{ text: placeholder, tone: 'muted' }];
  if (!focused) return [{ text: field.text }];
  const before = field.text.slice(0, field.cursor);
  const at = field.text.slice(field.cursor, field.cursor + 1) || ' ';
  const after = field.text.slice(field.cursor + 1);
  const spans: Span[] = [{ text: before }, { text: at, inverse: true }, { text: after }];
  if (field.text === '' && placeholder) spans.push({ text: ` ${placeholder}`, tone: 'muted' });
  return spans;
}

export interface FrameProps {
  readonly theme: Theme;
  readonly width: number;
  readonly height: number;
  /** Body lines, fitted to the inner width here. The frame is always `height` rows tall. */
  readonly lines: readonly Line[];
}

/** The box every modal draws in (round border, or none in plain mode). Empty lines keep their row. */
export function ModalFrame({ theme, width, height, lines }: FrameProps) {
  const inner = innerSize(theme, width, height);
  const shown = lines.slice(0, inner.height);
  return (
    <Box flexDirection="column" width={width} height={height} borderStyle={theme.plain ? undefined : 'round'} paddingX={theme.plain ? 0 : 1}>
      {shown.map((line, i) => <Text key={i} wrap="truncate">{lineToAnsi(fitLine(line, inner.width), theme) || ' '}</Text>)}
    </Box>
  );
}

/**
 * Modal-local state read and written synchronously by key handlers: several keys can arrive
 * in one input chunk, before React renders again, and each must see the previous one's effect.
 */
export function useSyncState<T>(initial: () => T): [() => T, (next: T) => void] {
  const ref = useRef<T | null>(null);
  if (ref.current === null) ref.current = initial();
  const [, bump] = useReducer((n: number) => n + 1, 0);
  const get = useCallback(() => ref.current as T, []);
  const set = useCallback((next: T) => { ref.current = next; bump(); }, []);
  return [get, set];
}

/** A value from the last render, readable from a stable callback. */
export function useLatest<T>(value: T): { readonly current: T } {
  const ref = useRef(value);
  ref.current = value;
  return ref;
}

/** `text` cut into rows of at most `cells` (hard wrap; tabs and control characters cleaned). */
export function hardWrap(text: string, cells: number): string[] {
  const out: string[] = [];
  for (const raw of sanitize(text).split('\n')) {
    let rest = raw;
    if (rest === '') { out.push(''); continue; }
    while (rest !== '') {
      const { head } = fitPrefix(rest, Math.max(1, cells));
      const take = head === '' ? [...rest][0]! : head;
      out.push(take);
      rest = rest.slice(take.length);
    }
  }
  return out;
}
