import React, { useCallback, useContext, useEffect } from 'react';
import type { KeyPress } from '../input/decode-keys';
import type { Checkpoint } from '../../src/checkpoints/records';
import type { UndoPreview } from '../../src/checkpoints/undo-service';
import type { Line } from '../text/line';
import type { ModalProps } from './modal-api';
import { useModalKeys } from './modal-api';
import { ModalFrame, innerSize, listStep, listWindow, useSyncState } from './switcher-kit';
import { UndoContext } from './undo-context';
import { checkpointRow, previewLines } from './checkpoint-lines';

/**
 * The checkpoints of the focused lane's session (docs/undo.md, Ctrl+R): newest first, each with
 * who made it and the files its batch changed. Enter shows what undoing to before it would do
 * (the files and their diff; files changed by hand since are listed apart and kept); `y`
 * restores, `c` includes the hand-changed files too. Esc goes back, then closes.
 */
type Message = { readonly level: 'info' | 'error'; readonly text: string };
type Local =
  | { readonly view: 'loading' }
  | { readonly view: 'list'; readonly items: readonly Checkpoint[]; readonly selected: number; readonly message?: Message }
  | { readonly view: 'busy'; readonly items: readonly Checkpoint[]; readonly selected: number; readonly text: string }
  | {
    readonly view: 'preview'; readonly items: readonly Checkpoint[]; readonly selected: number;
    readonly preview: UndoPreview; readonly scroll: number; readonly includeConflicts: boolean;
  };

export function CheckpointsModal(props: ModalProps) {
  const { theme, width, height, modal } = props;
  const undo = useContext(UndoContext);
  const sessionId = modal.kind === 'checkpoints' ? modal.sessionId : '';
  const [get, set] = useSyncState<Local>(() => ({ view: 'loading' }));
  const inner = innerSize(theme, width, height);
  const rows = Math.max(1, inner.height - 4);

  const load = useCallback((selected: number, message?: Message) => {
    if (!undo) return;
    undo.list(sessionId).then(
      (items) => set({ view: 'list', items, selected: Math.min(selected, Math.max(0, items.length - 1)), ...(message ? { message } : {}) }),
      (error: unknown) => set({ view: 'list', items: [], selected: 0, message: { level: 'error', text: String(error) } }),
    );
  }, [undo, sessionId, set]);
  useEffect(() => load(0), [load]);

  const onKey = useCallback((key: KeyPress): boolean => {
    const local = get();
    if (!undo || local.view === 'loading' || local.view === 'busy') return key.name !== 'escape';
    if (local.view === 'list') {
      const step = listStep(key.name, rows);
      if (step !== undefined) {
        set({ ...local, selected: Math.min(Math.max(0, local.items.length - 1), Math.max(0, local.selected + step)), message: undefined });
        return true;
      }
      switch (key.name) {
        case 'enter': {
          const chosen = local.items[local.selected];
          if (!chosen) return true;
          set({ view: 'busy', items: local.items, selected: local.selected, text: `comparing the workspace with ${chosen.id}…` });
          void undo.preview({ id: chosen.id }).then((shown) => {
            if (!shown.ok) return set({ ...local, message: { level: 'error', text: shown.error } });
            set({ view: 'preview', items: local.items, selected: local.selected, preview: shown.preview, scroll: 0, includeConflicts: false });
          });
          return true;
        }
        default: return false;
      }
    }
    // Preview.
    const total = previewLines(local.preview, local.includeConflicts).length;
    const step = listStep(key.name, rows);
    if (step !== undefined) {
      set({ ...local, scroll: Math.min(Math.max(0, total - rows), Math.max(0, local.scroll + step)) });
      return true;
    }
    switch (key.name) {
      case 'escape': set({ view: 'list', items: local.items, selected: local.selected }); return true;
      case 'c':
        if (local.preview.plan.conflicts.length > 0) set({ ...local, includeConflicts: !local.includeConflicts, scroll: 0 });
        return true;
      case 'y': {
        set({ view: 'busy', items: local.items, selected: local.selected, text: 'restoring…' });
        void undo.restore(local.preview.plan, { includeConflicts: local.includeConflicts }).then((outcome) => {
          if (!outcome.ok) return set({ view: 'list', items: local.items, selected: local.selected, message: { level: 'error', text: outcome.error } });
          const told = outcome.notes.filter((n) => !outcome.undelivered?.includes(n)).map((n) => n.participantId);
          const text = `restored ${outcome.restored.length} file(s)${outcome.kept.length ? `, kept ${outcome.kept.length} changed by hand` : ''}${told.length ? `; told ${told.join(', ')}` : ''}. The restore is the newest checkpoint: Enter on it undoes it.`;
          load(0, { level: 'info', text });
        });
        return true;
      }
      default: return false;
    }
  }, [get, set, undo, rows, load]);
  useModalKeys(onKey);

  const local = get();
  const title: Line = [{ text: 'Checkpoints', bold: true, tone: 'heading' }, { text: ` ${theme.dot} ${sessionId.replace(/^session-/, '')}`, tone: 'muted' }];
  const lines: Line[] = [title, []];
  let help = 'Esc close';
  if (!undo) {
    lines.push([{ text: 'Checkpoints are off (checkpoints.enabled: false, or they could not start; see the notice).', tone: 'muted' }]);
  } else if (local.view === 'loading') {
    lines.push([{ text: 'reading checkpoints…', tone: 'muted' }]);
  } else if (local.view === 'busy') {
    lines.push([{ text: local.text, tone: 'muted' }]);
  } else if (local.view === 'list') {
    if (local.message) lines.push([{ text: local.message.text, tone: local.message.level === 'error' ? 'error' : 'ok' }], []);
    if (local.items.length === 0) lines.push([{ text: 'No checkpoints in this session yet: one is taken before each batch that may change files.', tone: 'muted' }]);
    const now = new Date();
    const { start, end } = listWindow(local.items.length, local.selected, rows - (local.message ? 2 : 0));
    for (let i = start; i < end; i++) lines.push(checkpointRow(theme, local.items[i]!, i === local.selected, now, inner.width));
    help = '↑↓ move · Enter what undoing to before it does · Esc close';
  } else {
    const all = previewLines(local.preview, local.includeConflicts);
    lines.push(...all.slice(local.scroll, local.scroll + rows));
    const conflicts = local.preview.plan.conflicts.length;
    help = `y restore${conflicts ? ` · c ${local.includeConflicts ? 'keep' : 'also restore'} the ${conflicts} file(s) changed by hand` : ''} · ↑↓ scroll · Esc back`;
  }
  while (lines.length < inner.height - 1) lines.push([]);
  lines.length = Math.max(0, inner.height - 1);
  lines.push([{ text: help, tone: 'muted' }]);
  return <ModalFrame theme={theme} width={width} height={height} lines={lines} />;
}
