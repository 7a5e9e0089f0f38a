import React, { memo, useCallback, useMemo, useSyncExternalStore } from 'react';
import { Box } from 'ink';
import type { LaneView, SessionView } from '../state/ui-state';
import type { UiStore } from '../state/store';
import { activityRow } from './activity';
import type { Theme } from '../theme';
import type { Line } from '../text/line';
import { ansiLine } from '../text/ansi';
import { AnsiBlock } from '../text/AnsiText';
import { truncate } from '../text/width';
import { lineSource } from './line-source';
import { viewport } from './viewport';
import type { LineContext } from './entry-lines';
import { highlightVersion } from '../markdown/highlight';
import { welcomeLines } from './welcome';
import { laneHeader } from './lane-header';

export interface LaneProps {
  /**
   * Where the lane reads its session and activity row as the screen shows them
   * (`getSnapshot()`): a streamed frame renders the lane without the App (which renders from
   * the outline, where streamed text lags).
   */
  readonly store: UiStore;
  /** The session as the outline has it (its id; it stands in if the snapshot lacks it). */
  readonly session: SessionView;
  readonly view: LaneView;
  readonly width: number;
  readonly height: number;
  readonly focused: boolean;
  /** Current spinner frame ('' when none). */
  readonly spinner: string;
  readonly theme: Theme;
  /** `highlightVersion()`: a new value re-renders the lane with highlighted code. */
  readonly highlight: number;
  /** Paragraphs shown while the session has no message yet (the home lane's welcome). */
  readonly welcome?: readonly string[] | null;
}

/** Lines of transcript a lane of `height` rows shows (header and activity row excluded). */
export function laneBodyHeight(height: number, hasActivity: boolean): number {
  return Math.max(0, height - 1 - (hasActivity ? 1 : 0));
}

/** Context for wrapping a lane's lines; stable per (width, expanded, theme) so caches hit. */
const contexts = new Map<string, LineContext>();
/** Empty the cache of line contexts (the snapshot build's warm-up render leaves none: components/warm-render.tsx). */
export function forgetLineContexts(): void {
  contexts.clear();
}
export function lineContext(width: number, expanded: boolean, theme: Theme): LineContext {
  const highlight = highlightVersion();
  const key = `${width}:${expanded}:${theme.plain}:${highlight}`;
  let ctx = contexts.get(key);
  if (!ctx) contexts.set(key, (ctx = { width: Math.max(1, width), expanded, glyphs: theme.transcript, highlight }));
  return ctx;
}

/** One session: a header (`initiator → responder · name`, status, tokens) over its visible lines. */
export const Lane = memo(function Lane(props: LaneProps) {
  const { store, view, width, height, focused, spinner, theme } = props;
  const id = props.session.id;
  const session = useSyncExternalStore(store.subscribe, useCallback(() => store.getSnapshot().sessions[id], [store, id])) ?? props.session;
  // The user's lane: one line naming a delegate at work (most recent first), or null.
  const activity = useSyncExternalStore(store.subscribe, useCallback(() => activityRow(store.getSnapshot(), props.session, theme, spinner), [store, props.session, theme, spinner]));
  const bodyHeight = laneBodyHeight(height, activity !== null);
  const ctx = lineContext(width, view.expanded, theme);
  const empty = session.entries.length === 0 && session.streaming === '';
  const welcome = empty ? props.welcome ?? null : null;
  const shown = useMemo(
    () => (welcome ? welcomeViewport(welcome, ctx.width, bodyHeight) : viewport(lineSource(session, ctx), view.scroll, bodyHeight)),
    [session, ctx, view.scroll, bodyHeight, welcome],
  );
  // Every row of the lane as one AnsiBlock: one element and one Ink text node per lane.
  const texts: string[] = [ansiLine(laneHeader({ session, width, focused, spinner, theme, scrolled: shown.below }), theme).text];
  for (let i = 0; i < bodyHeight; i++) {
    const line = shown.lines[i];
    texts.push(line ? ansiLine(line, theme).text : '');
  }
  if (activity !== null) texts.push(ansiLine([{ text: truncate(activity, width), tone: 'agent', dim: !spinner }], theme).text);
  return (
    <Box flexDirection="column" width={width} height={height}>
      <AnsiBlock texts={texts} box={width} />
    </Box>
  );
});

/** The welcome's lines from the top, cut to the lane (the viewport's shape, nothing below). */
function welcomeViewport(paragraphs: readonly string[], width: number, height: number): { lines: readonly Line[]; ids: readonly string[]; above: boolean; below: boolean } {
  const lines = welcomeLines(paragraphs, width).slice(0, height);
  return { lines, ids: lines.map((_, i) => `welcome-${i}`), above: false, below: false };
}
