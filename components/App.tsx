import React, { memo, useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { Box } from 'ink';
import type { LegionCore, WorkflowCommands } from '../src/runtime/core-api';
import type { HistorySource } from './modals/history-source';
import type { Keymap } from './keymap';
import { formatKey } from './keymap';
import type { Theme } from './theme';
import type { UiStore } from './state/store';
import type { UiState } from './state/ui-state';
import { EMPTY_DRAFT, awaitsUser, canType, focusedSession, viewOf } from './state/ui-state';
import { LaneGrid } from './lanes/LaneGrid';
import { laneGrid } from './lanes/layout';
import { laneBodyHeight } from './lanes/Lane';
import { activityRow } from './lanes/activity';
import { welcomeText } from './lanes/welcome';
import { Composer, composerRows } from './composer/Composer';
import { StatusBar, useStatusFacts } from './StatusBar';
import { ModalHost } from './modals/ModalHost';
import { ModalKeysContext, type ModalKeyHandler, type ModalKeysRegistry } from './modals/modal-api';
import { useKeys } from './use-keys';
import { useSpinner } from './use-spinner';
import { useTerminalSize } from './use-terminal-size';
import { handleKey } from './app-keys';
import { sanitize } from './text/ansi';
import { highlightVersion, loadHighlighter } from './markdown/highlight';
import { truncate } from './text/width';
import { AnsiLine } from './text/AnsiText';
import type { Span } from './text/line';

export interface AppProps {
  readonly core: LegionCore;
  /** The run history beside the core (the history browser). */
  readonly history: HistorySource;
  /** The workflows beside the core (the new-session dialog, Esc in a workflow's lane). */
  readonly workflows: WorkflowCommands;
  readonly store: UiStore;
  readonly keymap: Keymap;
  readonly theme: Theme;
  /** Provider and model as the composition root names them ("anthropic claude-…", "demo"). */
  readonly providerLabel: string;
  /** Running on the faux provider because no API key is set. */
  readonly demo: boolean;
  /** The workspace folder, named in the home lane's welcome. */
  readonly workspaceRoot?: string;
  /** Where the core runs, for the status bar (absent: not shown). */
  readonly mode?: 'attached' | 'local';
  /** Called once when the user quits (Ctrl+C twice); the caller closes the core. */
  readonly onQuit: () => void;
  readonly now?: () => number;
}

export const DEMO_BANNER = 'DEMO — no API key: set ANTHROPIC_API_KEY or OPENAI_API_KEY';

/**
 * The whole screen: [demo banner] lanes (or the open modal) · rule · composer · hint line ·
 * status bar. Renders one row less than the terminal so Ink never clears the screen per frame.
 */
export function App(props: AppProps) {
  const { core, history, workflows, store, keymap, theme, providerLabel, demo } = props;
  // The outline: a frame that only streamed text renders the streaming lane alone (it reads its session itself).
  const state = useSyncExternalStore(store.subscribe, store.getOutline);
  const { columns, rows } = useTerminalSize();
  const width = Math.max(20, columns);
  const height = Math.max(6, rows - 1);

  // Spinners only while something works: not while everyone waits (for an approval, say).
  const highlight = useHighlighter();
  const spinner = useSpinner(anyWorking(state), theme.spinner, props.now, store.subscribe);
  const session = focusedSession(state);
  const draft = session ? viewOf(state, session.id).draft : EMPTY_DRAFT;
  const readOnly = session ? !canType(session) : true;
  const keys = useMemo(() => {
    const k = (a: Parameters<Keymap['keysOf']>[0], otherwise: string): string => formatKey(keymap.keysOf(a)[0] ?? otherwise);
    return { send: k('send', 'enter'), help: k('help', 'f1'), approvals: k('approvals', ''), nextLane: k('nextLane', ''), switcher: k('switcher', '') };
  }, [keymap]);
  // The status bar and hint line get only what they show: a streamed delta re-renders neither.
  const facts = useStatusFacts(state, keys.nextLane, keys.switcher, theme.dot);
  const maxComposer = Math.max(1, Math.min(8, Math.floor(height / 4)));
  const cRows = composerRows(draft, width, maxComposer, theme);
  const lanesHeight = Math.max(1, height - (demo ? 1 : 0) - (theme.plain ? 0 : 1) - cRows - 2);

  const geometry = useRef({ state, width, lanesHeight });
  geometry.current = { state, width, lanesHeight };
  const modalKeys = useRef<ModalKeyHandler | null>(null);
  const registry = useMemo<ModalKeysRegistry>(() => ({ set: (h) => { modalKeys.current = h; } }), []);
  const now = props.now ?? Date.now;
  const onQuit = props.onQuit;
  const quitOnce = useRef(false);
  const quit = useCallback(() => {
    if (quitOnce.current) return;
    quitOnce.current = true;
    onQuit();
  }, [onQuit]);

  useKeys((key) => handleKey(key, {
    store, core, workflows, keymap, theme, now, quit, modalKeys,
    laneBox: (index) => laneBox(geometry.current.state, geometry.current.width, geometry.current.lanesHeight, index, theme),
  }));

  const close = useCallback(() => store.dispatch({ type: 'close-modal' }), [store]);
  const welcome = useMemo(() => welcomeText({
    demo, ...(props.workspaceRoot ? { workspaceRoot: props.workspaceRoot } : {}),
    sendKey: formatKey(keymap.keysOf('send')[0] ?? 'enter'), helpKey: formatKey(keymap.keysOf('help')[0] ?? 'f1'),
    approvalsKey: formatKey(keymap.keysOf('approvals')[0] ?? 'ctrl+y'),
  }), [demo, props.workspaceRoot, keymap]);
  const placeholder = !session ? 'no session'
    : awaitsUser(session) ? `answer ${session.initiatorId}…  (${keys.send} sends your answer)`
    : readOnly && session.responderId === 'user' ? `read-only: no question of ${session.initiatorId} is open`
    : readOnly ? `read-only: ${session.initiatorId} ${theme.arrow} ${session.responderId} (agents talking)`
      : `message ${session.responderId}${session.name === 'default' ? '' : ` ${theme.dot} ${session.name}`}…  (${keys.help} help)`;

  return (
    <ModalKeysContext.Provider value={registry}>
      <Box flexDirection="column" width={width} height={height}>
        {demo ? <AnsiLine line={[{ text: truncate(theme.plain ? DEMO_BANNER.replace('—', '-') : ` ${DEMO_BANNER} `, width), tone: 'warn', bold: true, inverse: theme.color }]} theme={theme} /> : null}
        {state.modal ? (
          <ModalHost modal={state.modal} state={state} width={width} height={lanesHeight} theme={theme} keymap={keymap} core={core} history={history} workflows={workflows} store={store} close={close} />
        ) : (
          <LaneGrid state={state} store={store} width={width} height={lanesHeight} spinner={spinner} theme={theme} highlight={highlight} welcome={welcome} />
        )}
        {theme.plain ? null : <Rule width={width} theme={theme} />}
        <Composer draft={draft} width={width} rows={cRows} placeholder={placeholder} readOnly={readOnly} theme={theme} />
        <HintLine message={state.flash ?? linkLine(state) ?? state.notice} ended={state.ended} keymap={keymap} theme={theme} width={width} readOnly={readOnly} />
        <StatusBar facts={facts} providerLabel={providerLabel} demo={demo} width={width} {...(props.mode ? { mode: state.link ? (state.link.state === 'gone' ? 'disconnected' : 'reconnecting') : props.mode } : {})} spinner={spinner} approvalsKey={keys.approvals} theme={theme} />
      </Box>
    </ModalKeysContext.Provider>
  );
}

/**
 * Some agent thinks or runs a tool. A communicator call only waits on another session, which
 * has its own status; a question waits on the user.
 */
export function anyWorking(state: UiState): boolean {
  for (const id of state.order) {
    const s = state.sessions[id];
    if (s && ((s.status === 'thinking' && !awaitsUser(s)) || (s.status === 'running-tool' && s.detail !== 'communicator'))) return true;
  }
  return false;
}

/** Load code highlighting once the first frame is drawn; its version re-renders the lanes. */
function useHighlighter(): number {
  const [version, setVersion] = useState(highlightVersion);
  useEffect(() => {
    let live = true;
    const timer = setTimeout(() => void loadHighlighter().then(() => { if (live) setVersion(highlightVersion()); }), 0);
    return () => { live = false; clearTimeout(timer); };
  }, []);
  return version;
}

/** The rule above the composer: a box's top border (Ink draws it without measuring text). */
const Rule = memo(function Rule({ width, theme }: { readonly width: number; readonly theme: Theme }) {
  return <Box width={width} height={1} borderStyle="single" borderBottom={false} borderLeft={false} borderRight={false} {...(theme.color ? { borderColor: 'gray' } : {})} />;
});

/** The lane at `index`: its width and transcript height (for paging). */
function laneBox(state: UiState, width: number, height: number, index: number, theme: Theme): { width: number; bodyHeight: number } | null {
  for (const row of laneGrid(width, height, state.lanes.length, theme.plain)) {
    for (const cell of row.cells) {
      if (cell.index !== index) continue;
      const session = state.sessions[state.lanes[index]!];
      const activity = session ? activityRow(state, session, theme, '') !== null : false;
      return { width: cell.width, bodyHeight: laneBodyHeight(cell.height, activity) };
    }
  }
  return null;
}

interface HintLineProps {
  readonly message: UiState['notice'];
  readonly ended: UiState['ended'];
  readonly keymap: Keymap;
  readonly theme: Theme;
  readonly width: number;
  readonly readOnly: boolean;
}

/** The hint line, rendered again only when what it shows changes (not per streamed frame). */
export const HintLine = memo(function HintLine({ message, ended, keymap, theme, width, readOnly }: HintLineProps) {
  return <AnsiLine line={hintLine(message, ended, keymap, theme, width, readOnly)} theme={theme} />;
});

/** The line above the status bar: the answer to the last key, else the last notice, else key hints. */
function hintLine(message: UiState['notice'], ended: UiState['ended'], keymap: Keymap, theme: Theme, width: number, readOnly: boolean): Span[] {
  if (message) {
    const tone = message.level === 'error' ? 'error' : message.level === 'warn' ? 'warn' : 'accent';
    return [{ text: truncate(sanitize(message.text).replace(/\s+/g, ' '), width), tone }];
  }
  const k = (a: Parameters<Keymap['keysOf']>[0]): string => formatKey(keymap.keysOf(a)[0] ?? '?');
  const parts = readOnly
    ? [`${k('interrupt')} interrupt`, `${k('nextLane')} next lane`, `${k('switcher')} sessions`, `${k('help')} help`]
    : [`${k('send')} send`, `${k('newline')} newline`, `${k('nextLane')} lanes`, `${k('interrupt')} interrupt`, `${k('approvals')} approvals`, `${k('help')} help`];
  if (ended) parts.unshift(`run ended: ${ended}`);
  return [{ text: truncate(parts.join(`  ${theme.dot} `.replace(/^ /, ' ')), width), tone: 'muted' }];
}

/** The attached core's connection while it is down: shown in place of the notice until it is back (a key's flash still comes first). */
function linkLine(state: UiState): { readonly level: 'warn' | 'error'; readonly text: string } | null {
  return state.link ? { level: state.link.state === 'gone' ? 'error' : 'warn', text: state.link.text } : null;
}
