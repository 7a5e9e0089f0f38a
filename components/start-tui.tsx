import type { CommandContext } from '../src/cli/command';
import { composeApp, type AppSession } from '../src/cli/compose';
import { LegionError, messageOf } from '../src/errors';
import { buildKeymap } from './keymap';

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
  // The screen (Ink, React, components) loads while the core composes: its set-up runs while
  // the core waits for its files, which brings the first frame forward.
  const screen = import('./run-tui');
  screen.catch(() => undefined); // reported where it is awaited
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
    let runTui: typeof import('./run-tui').runTui;
    try {
      ({ runTui } = await screen);
    } catch (error) {
      await app.close('no screen');
      throw error;
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
