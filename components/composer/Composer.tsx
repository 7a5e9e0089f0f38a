import React, { memo } from 'react';
import { Box } from 'ink';
import type { Draft } from '../state/ui-state';
import type { Theme } from '../theme';
import type { Line } from '../text/line';
import { AnsiLine } from '../text/AnsiText';
import { truncate } from '../text/width';
import { composerLines } from './composer-lines';

export interface ComposerProps {
  readonly draft: Draft;
  readonly width: number;
  readonly rows: number;
  /** Shown dimmed when the draft is empty. */
  readonly placeholder: string;
  /** The focused lane is read-only: no cursor, the placeholder explains. */
  readonly readOnly: boolean;
  readonly theme: Theme;
}

/** Rows the composer takes for `draft` (1 … `max`). */
export function composerRows(draft: Draft, width: number, max: number, theme: Theme): number {
  if (draft.text === '') return 1;
  return Math.min(max, composerLines(draft, width, max, theme.transcript.prompt, false).totalRows);
}

/** The message being written for the focused lane, with its cursor. */
export const Composer = memo(function Composer({ draft, width, rows, placeholder, readOnly, theme }: ComposerProps) {
  const prompt = theme.transcript.prompt;
  if (draft.text === '') {
    const line: Line = [
      { text: prompt, tone: 'user', bold: true },
      readOnly ? { text: ' ' } : { text: ' ', inverse: true },
      { text: truncate(placeholder, Math.max(0, width - prompt.length - 2)), tone: 'muted', dim: !theme.color },
    ];
    return (
      <Box height={rows} flexDirection="column">
        <AnsiLine line={line} theme={theme} />
      </Box>
    );
  }
  const view = composerLines(draft, width, rows, prompt, !readOnly);
  return (
    <Box height={rows} flexDirection="column">
      {view.lines.map((line, i) => <AnsiLine key={i} line={line} theme={theme} />)}
    </Box>
  );
});
