import React from 'react';
import { render } from 'ink';
import type { CommandContext } from '../src/cli/command';
import { composeApp, type AppSession } from '../src/cli/compose';
import { LegionError, messageOf } from '../src/errors';
import { UR_AGENT_ID } from '../src/collective/participant';
import { App } from './App';
import { buildKeymap } from './keymap';
import { themeFromEnv } from './theme';
import { stateFromCore } from './state/from-core';
import { createUiStore } from './state/store';
import { isUserSession } from './state/ui-state';
import { terminalModes } from './terminal';
import { INK_MAX_FPS } from './render-options';
import { ModalServices } from './modals/history-providers';
import { watchApprovals } from './modals/approval-watch';

export interface StartTuiOptions {
  readonly context: CommandContext;
}

export { INK_MAX_FPS } from './render-options';

/**
 * `legion [start]`: compose the core for the run (`--run <id>`, `--new`, else the latest),
 * then run the full-screen UI until the user quits. Quitting (or SIGINT/SIGTERM/SIGHUP)
 * cancels running turns through `close()` so histories stay valid, and restores the
 * terminal also after a crash. Returns the exit code.
 */
export async function startTui(options: StartTuiOptions | unknown): Promise<number> {
  // CommandContext.startTui is typed `(options: unknown)` so src/ need not know this module.
  const { context } = options as StartTuiOptions;
  const runFlag = context.args.flags.get('run');
  const newRun = context.args.flags.get('new') === true;
  if (runFlag !== undefined && newRun) throw new LegionError('use either --run <id> or --new, not both', 2);
  // The history browser can resume another run: the UI closes this run and composes that one
  // (issue 7). If that fails (e.g. another Legion holds it), the run it came from comes back.
  let target: RunTarget = { ...(typeof runFlag === 'string' ? { runId: runFlag } : {}), newRun };
  for (;;) {
    let app: AppSession;
    try {
      app = await composeApp(context, { ...(target.runId ? { runId: target.runId } : {}), newRun: target.newRun });
    } catch (error) {
      if (!target.from) throw error;
      target = { runId: target.from, newRun: false, warning: `could not resume run ${target.runId}: ${messageOf(error)}` };
      continue;
    }
    if (target.warning) app.warnings.push(target.warning);
    const keymap = buildKeymap(app.config.keymap);
    if (!keymap.ok) {
      await app.close('config error');
      throw new LegionError(keymap.error, 2);
    }
    const outcome = await runTui(app, keymap.keymap, context, target.show);
    if (!outcome.switchTo) return outcome.code;
    target = { runId: outcome.switchTo.runId, newRun: false, from: app.runId, ...(outcome.switchTo.sessionId ? { show: outcome.switchTo.sessionId } : {}) };
  }
}

interface RunTarget {
  readonly runId?: string;
  readonly newRun: boolean;
  /** Show this session in a focused lane once composed. */
  readonly show?: string;
  /** The run a switch came from (resumed again if the switch fails). */
  readonly from?: string;
  readonly warning?: string;
}

interface TuiOutcome {
  readonly code: number;
  /** The history browser asked to resume another run. */
  readonly switchTo?: { readonly runId: string; readonly sessionId?: string };
}

async function runTui(app: AppSession, keymap: Parameters<typeof App>[0]['keymap'], context: CommandContext, show?: string): Promise<TuiOutcome> {
  const { core, config } = app;
  const theme = themeFromEnv(context.io.env, context.args.global.plain, config.ui.plain);
  const settings = { maxLanes: config.ui.maxLanes, autoOpenLanes: config.ui.autoOpenLanes };
  let initial = stateFromCore(core, settings, app.resumed);
  if (app.warnings.length > 0) initial = { ...initial, notice: { level: 'warn', text: app.warnings.join(' · ') } };
  const store = createUiStore({ core, initial, frameMs: Math.ceil(1000 / config.ui.maxFps) });
  if (!Object.values(initial.sessions).some(isUserSession)) {
    const opened = core.openSession(UR_AGENT_ID);
    if (opened.ok) store.dispatch({ type: 'show-session', sessionId: opened.sessionId });
  } else {
    store.dispatch({ type: 'focus-index', index: 0 });
  }
  if (show && store.getState().sessions[show]) store.dispatch({ type: 'show-session', sessionId: show });
  // A request for the user opens the queue by itself (empty composer) and rings the bell (ui.bell).
  const unwatch = watchApprovals({ bus: core.bus, store, bell: config.ui.bell, ring: () => void process.stdout.write('\x07'), now: () => performance.now() });

  const modes = terminalModes(1);
  let code = 0;
  let closing: Promise<void> | null = null;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => { finish = resolve; });
  const shutdown = (reason: string, exitCode: number): Promise<void> => {
    if (closing) return closing;
    code = exitCode;
    closing = (async () => {
      try { await app.close(reason); } catch (error) { context.io.stderr(`legion: closing the run failed: ${messageOf(error)}\n`); }
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
    context.io.stderr(`legion: ${messageOf(error)}\n`);
    if (context.io.env.LEGION_DEBUG === '1' && error instanceof Error && error.stack) context.io.stderr(`${error.stack}\n`);
    void shutdown('crash', 1);
  };
  const onExit = (): void => modes.leave();
  let switchTo: TuiOutcome['switchTo'];
  const switchRun = (runId: string, sessionId?: string): void => {
    if (closing) return;
    switchTo = { runId, ...(sessionId ? { sessionId } : {}) };
    void shutdown('switch run', 0);
  };

  modes.enter();
  process.on('exit', onExit);
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);
  const instance = render(
    <ModalServices workspaceRoot={context.workspaceRoot} core={core} switchRun={switchRun}>
      <App core={core} store={store} keymap={keymap} theme={theme} providerLabel={app.providerLabel} demo={app.demo} onQuit={() => void shutdown('quit', 0)} />
    </ModalServices>,
    { maxFps: INK_MAX_FPS, exitOnCtrlC: false, patchConsole: false },
  );
  instance.waitUntilExit().catch((error: unknown) => onCrash(error));
  try {
    await finished;
  } finally {
    unwatch();
    store.dispose();
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(s, onSignal);
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
    process.off('exit', onExit);
    modes.leave();
  }
  return { code, ...(switchTo ? { switchTo } : {}) };
}
