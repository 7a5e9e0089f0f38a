import React, { memo } from 'react';
import { Box, Text } from 'ink';
import type { UiState } from '../state/ui-state';
import type { UiStore } from '../state/store';
import { isBusy, viewOf } from '../state/ui-state';
import type { Theme } from '../theme';
import { Lane } from './Lane';
import { laneGrid } from './layout';
import { lineToAnsi } from '../text/ansi';
import { HOME_SESSION_ID } from '../state/home-lane';

export interface LaneGridProps {
  /** The store's outline (see `UiStore.getOutline`): lanes read their sessions from `store`. */
  readonly state: UiState;
  readonly store: UiStore;
  readonly width: number;
  readonly height: number;
  readonly spinner: string;
  readonly theme: Theme;
  /** `highlightVersion()` (see Lane). */
  readonly highlight: number;
  /** The welcome of the empty home lane (see welcome.ts), or null. */
  readonly welcome?: readonly string[] | null;
}

/** The visible lanes in a grid (see `laneGrid`), separated by a vertical rule. */
export const LaneGrid = memo(function LaneGrid({ state, store, width, height, spinner, theme, highlight, welcome = null }: LaneGridProps) {
  const rows = laneGrid(width, height, state.lanes.length, theme.plain);
  if (rows.length === 0) {
    return <Box height={height}><Text>{lineToAnsi([{ text: 'No session yet.', tone: 'muted' }], theme)}</Text></Box>;
  }
  return (
    <Box flexDirection="column" width={width} height={height}>
      {rows.map((row, r) => (
        <Box key={r} flexDirection="row" height={row.height}>
          {row.cells.map((cell, c) => {
            const id = state.lanes[cell.index]!;
            const session = state.sessions[id];
            if (!session) return <Box key={id} width={cell.width} />;
            const lane = (
              <Lane
                key={cell.index}
                store={store}
                session={session}
                view={viewOf(state, id)}
                width={cell.width}
                height={cell.height}
                focused={cell.index === state.focus}
                spinner={isBusy(session.status) ? spinner : ''}
                theme={theme}
                highlight={highlight}
                welcome={id === HOME_SESSION_ID ? welcome : null}
              />
            );
            if (c === 0) return lane;
            return (
              <React.Fragment key={cell.index}>
                <Separator height={cell.height} theme={theme} />
                {lane}
              </React.Fragment>
            );
          })}
        </Box>
      ))}
    </Box>
  );
});

/**
 * The rule between lanes: a box's left border (drawn by Ink as one cached string per row, no
 * text measuring), or a column of spaces in plain mode.
 */
const Separator = memo(function Separator({ height, theme }: { readonly height: number; readonly theme: Theme }) {
  if (theme.plain) return <Box width={1} height={height} />;
  return (
    <Box width={1} height={height} borderStyle="single" borderTop={false} borderRight={false} borderBottom={false}
      {...(theme.color ? { borderColor: 'gray' } : {})} />
  );
});
