import type { Checkpoint } from '../../src/checkpoints/records';
import type { UndoPreview } from '../../src/checkpoints/undo-service';
import { changedFilesText, checkpointOrigin, planLines } from '../../src/checkpoints/checkpoint-text';
import type { Line, Span } from '../text/line';
import type { Theme } from '../theme';
import { age, marker, pad, selectStyle } from './switcher-kit';

/** The checkpoints modal's lines (pure): the list of a session's checkpoints, and the preview of one undo. */

export function checkpointRow(theme: Theme, checkpoint: Checkpoint, selected: boolean, now: Date, width: number): Line {
  const row: Span[] = [
    marker(theme, selected),
    { text: pad(age(checkpoint.at, now), 8), tone: 'muted' },
    { text: ` ${pad(checkpointOrigin(checkpoint), Math.min(44, Math.max(20, Math.floor(width / 2.5))))}`, bold: selected },
    { text: `  ${changedFilesText(checkpoint, 4)}`, tone: checkpoint.after ? undefined : 'warn' },
  ];
  return selectStyle(theme, row, selected);
}

/** The plan then its diff (and the conflicts' diff when they are included), coloured. */
export function previewLines(preview: UndoPreview, includeConflicts: boolean): Line[] {
  const lines: Line[] = planLines(preview.plan, includeConflicts).map((text, i) => [{
    text, tone: i === 0 ? 'heading' : text.startsWith('changed by hand') ? 'warn' : undefined, bold: i === 0,
  }]);
  const diff = includeConflicts ? preview.diff + preview.conflictDiff : preview.diff;
  if (diff) lines.push([]);
  for (const text of diff.split('\n')) {
    if (text === '' ) continue;
    const tone = text.startsWith('+++') || text.startsWith('---') || text.startsWith('diff ') ? 'muted'
      : text.startsWith('+') ? 'ok' : text.startsWith('-') ? 'error' : text.startsWith('@@') ? 'accent' : undefined;
    lines.push([{ text, tone }]);
  }
  return lines;
}
