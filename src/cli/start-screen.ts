import type { Screen } from '../runtime/core-api';
import { LegionError, messageOf } from '../errors';
import type { CommandContext } from './command';
import { composeApp, type AppSession } from './compose';
import { attachChoice, attachedScreenSession, serverToAttach } from './attach';
import { endStartGrowth } from './start-growth';

/**
 * `legion [start]`: compose the core for the run (`--run <id>`, `--new`, else the latest),
 * then hand it to the full-screen UI (`loadScreen`, injected by the entry so `src/` never
 * imports it) until the user quits. The history browser can resume another run: the screen
 * returns, this run is closed and that one composed (if that fails, e.g. another Legion holds
 * it, the run it came from comes back). Returns the exit code.
 */
export async function startScreen(context: CommandContext, loadScreen: () => Promise<Screen>): Promise<number> {
  // Less garbage collection until the first frame (start-growth.ts): ended once it is drawn, or when the screen ends.
  try {
    return await runScreen(context, loadScreen, endStartGrowth);
  } finally {
    endStartGrowth();
  }
}

async function runScreen(context: CommandContext, loadScreen: () => Promise<Screen>, firstFrame: () => void): Promise<number> {
  const runFlag = context.args.flags.get('run');
  const newRun = context.args.flags.get('new') === true;
  if (runFlag !== undefined && newRun) throw new LegionError('use either --run <id> or --new, not both', 2);
  let target: RunTarget = { ...(typeof runFlag === 'string' ? { runId: runFlag } : {}), newRun };
  // A server runs for the workspace: the screen attaches to it instead (docs/serve.md#attaching).
  const server = await serverToAttach(context, attachChoice(context));
  // The screen (Ink, React, components) loads while the core composes: its set-up runs while
  // the core waits for its files, which brings the first frame forward.
  const screen = loadScreen();
  screen.catch(() => undefined); // reported where it is awaited
  if (server) {
    const session = await attachedScreenSession(context, server);
    let loaded: Screen;
    try {
      loaded = await screen;
    } catch (error) {
      await session.close('no screen');
      throw error;
    }
    const outcome = await loaded.run(session, { firstFrame, env: context.io.env, plain: context.args.global.plain, workspaceRoot: context.workspaceRoot, stderr: (text) => context.io.stderr(text) });
    return outcome.code;
  }
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
    let loaded: Screen;
    try {
      loaded = await screen;
    } catch (error) {
      await app.close('no screen');
      throw error;
    }
    const outcome = await loaded.run(app, {
      firstFrame,
      env: context.io.env,
      plain: context.args.global.plain,
      workspaceRoot: context.workspaceRoot,
      stderr: (text) => context.io.stderr(text),
      ...(target.show ? { show: target.show } : {}),
    });
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
