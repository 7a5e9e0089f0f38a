import React from 'react';
import { render } from 'ink';
import type { ScreenOptions, ScreenOutcome, ScreenSession } from '../src/runtime/core-api';
import { messageOf } from '../src/errors';
import { App } from './App';
import type { Keymap } from './keymap';
import { themeFromEnv, type Theme } from './theme';
import { startState } from './state/home-lane';
import { stateFromCore } from './state/from-core';
import { createUiStore, type UiStore } from './state/store';
import type { UiSettings, UiState } from './state/ui-state';
import { terminalModes } from './terminal';
import { INK_MAX_FPS } from './render-options';
import { installInkOutputCache } from './text/ink-output';
import { ModalServices } from './modals/history-providers';
import { createHistorySource, type HistorySource } from './modals/history-source';
import { watchApprovals } from './modals/approval-watch';
import { watchQuestions } from './question-watch';

/**
 * Run the full-screen UI on a composed run until the user quits (or asks to switch runs):
 * alternate screen, signals (SIGINT/SIGTERM close the run cleanly; SIGHUP and a dead terminal
 * close it fast), crash reporting with the terminal restored.
 */
export async function runTui(app: ScreenSession, keymap: Keymap, context: ScreenOptions): Promise<ScreenOutcome> {
  const show = context.show;
  const { core, config } = app;
  const theme = themeFromEnv(context.env, context.plain, config.ui.plain);
  const settings = settingsOf(config);
  const store = createUiStore({ core, initial: initialState(app, settings), frameMs: frameMsOf(config) });
  // An attached core that missed events rebuilt its state from the server's snapshot: so does the UI.
  const unresync = core.onResync(() => store.dispatch({ type: 'resync', fresh: stateFromCore(core, settings, app.resumed) }));
  // An attached core's connection: down (reconnecting, gone) and back.
  const unlink = core.onLink((link) => store.dispatch({ type: 'link', link }));
  if (show && store.getState().sessions[show]) store.dispatch({ type: 'show-session', sessionId: show });
  // A request for the user opens the queue by itself (empty composer) and rings the bell (ui.bell).
  const unwatch = watchApprovals({ bus: core.bus, store, bell: config.ui.bell, ring: () => void process.stdout.write('\x07'), now: () => Date.now() });
  // A question of an agent opens its lane (the reducer); one that could not take the focus rings the bell.
  const unwatchQuestions = watchQuestions({ bus: core.bus, store, bell: config.ui.bell, ring: () => void process.stdout.write('\x07') });

  const modes = terminalModes(1);
  let code = 0;
  let closing: Promise<void> | null = null;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => { finish = resolve; });
  const shutdown = (reason: string, exitCode: number): Promise<void> => {
    if (closing) return closing;
    code = exitCode;
    closing = (async () => {
      try { await app.close(reason); } catch (error) { context.stderr(`legion: closing the run failed: ${messageOf(error)}\n`); }
      instance.unmount();
      modes.leave();
      finish();
    })();
    return closing;
  };
  // The terminal is gone (SIGHUP, EIO): nothing to draw or restore. Close the run (it releases
  // the lock at once, so a new start can take it), then end without Node's tty reset, which
  // aborts on a dead terminal.
  let hungUp = false;
  const hangup = (): void => {
    if (hungUp) return;
    hungUp = true;
    modes.abandon();
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, 2000).unref());
    void Promise.race([app.close('hangup').catch(() => undefined), deadline]).then(() => process.kill(process.pid, 'SIGKILL'));
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signal === 'SIGHUP') return hangup();
    void shutdown(`signal ${signal}`, signal === 'SIGINT' ? 130 : 143);
  };
  const onCrash = (error: unknown): void => {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    if (code === 'EIO' || code === 'EPIPE' || code === 'ENXIO') return hangup();
    modes.leave();
    context.stderr(`legion: ${messageOf(error)}\n`);
    if (context.env.LEGION_DEBUG === '1' && error instanceof Error && error.stack) context.stderr(`${error.stack}\n`);
    void shutdown('crash', 1);
  };
  const onExit = (): void => modes.leave();
  let switchTo: ScreenOutcome['switchTo'];
  const switchRun = (runId: string, sessionId?: string): void => {
    if (closing) return;
    switchTo = { runId, ...(sessionId ? { sessionId } : {}) };
    void shutdown('switch run', 0);
  };

  // Attached, the server holds its run: older runs are browsed read-only, never resumed here.
  const history = createHistorySource({ runId: core.runId, history: app.history, ...(app.attached ? {} : { switchRun }) });

  installInkOutputCache(); // frames cost their changed rows, not the whole screen
  modes.enter();
  process.on('exit', onExit);
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);
  const instance = render(
    screenElement({ app, history, store, keymap, theme, workspaceRoot: context.workspaceRoot, onQuit: () => void shutdown('quit', 0) }),
    { maxFps: INK_MAX_FPS, exitOnCtrlC: false, patchConsole: false },
  );
  instance.waitUntilExit().catch((error: unknown) => onCrash(error));
  // MCP servers start once the first frame is out, never before it (docs/mcp.md).
  setTimeout(() => {
    context.firstFrame?.();
    app.startBackground();
  }, 0).unref();
  try {
    await finished;
  } finally {
    unwatch();
    unwatchQuestions();
    unresync();
    unlink();
    store.dispose();
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(s, onSignal);
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
    process.off('exit', onExit);
    modes.leave();
  }
  return { code, ...(switchTo ? { switchTo } : {}) };
}

/** The UI settings of a run's config. */
export const settingsOf = (config: ScreenSession['config']): UiSettings => ({ maxLanes: config.ui.maxLanes, autoOpenLanes: config.ui.autoOpenLanes });

/** The store's frame interval for a run's config (`ui.maxFps`). */
export const frameMsOf = (config: ScreenSession['config']): number => Math.ceil(1000 / config.ui.maxFps);

/**
 * The UI state the screen starts with: the home lane `user → ur-agent · default` first and
 * focused (state/home-lane.ts), the start's warnings as a notice.
 */
export function initialState(app: Pick<ScreenSession, 'core' | 'resumed' | 'warnings'>, settings: UiSettings): UiState {
  const start = startState(app.core, settings, app.resumed);
  const warnings = [...app.warnings, ...(start.problem ? [start.problem] : [])];
  return warnings.length > 0 ? { ...start.state, notice: { level: 'warn' as const, text: warnings.join(' · ') } } : start.state;
}

/** The element the screen renders for a run (also rendered once while a start-up snapshot builds: warm-render.tsx). */
export function screenElement(props: {
  readonly app: Pick<ScreenSession, 'core' | 'workflows' | 'providerLabel' | 'demo' | 'attached' | 'undo'>;
  readonly history: HistorySource;
  readonly store: UiStore;
  readonly keymap: Keymap;
  readonly theme: Theme;
  readonly workspaceRoot: string;
  readonly onQuit: () => void;
}): React.ReactElement {
  const { app, history, store, keymap, theme, workspaceRoot, onQuit } = props;
  return (
    <ModalServices workspaceRoot={workspaceRoot} {...(app.undo ? { undo: app.undo } : {})}>
      <App core={app.core} history={history} workflows={app.workflows} store={store} keymap={keymap} theme={theme} providerLabel={app.providerLabel} demo={app.demo} mode={app.attached ? 'attached' : 'local'}
        workspaceRoot={workspaceRoot} onQuit={onQuit} />
    </ModalServices>
  );
}
