import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { CLI, legionTui, quitTui, startTmux, type Tmux } from './modals-support';
import { until } from '../helpers/processes';

/**
 * The two ways a user runs the TUI (docs/serve.md#attaching): `local`, the core in the TUI's
 * own process, and `attached` to a real `legion serve` of the same workspace, started before
 * and stopped after. The same scenario runs in both (tui-scenarios.ts): a behaviour that
 * differs between them fails.
 */
export type Mode = 'local' | 'attached';
export const MODES: readonly Mode[] = ['local', 'attached'];

export interface ModeContext {
  readonly mode: Mode;
  readonly dir: string;
  /** The built CLI as a user would type it (it attaches by itself when a server runs). */
  cli(args: readonly string[]): SpawnSyncReturns<string>;
  /** Start the TUI; resolves once its first frame shows the status bar with this mode. */
  openTui(): Promise<Tmux>;
}

export interface ModeOptions {
  /** A new run rather than the latest (`legion --new` locally, `legion serve --new` attached). */
  readonly newRun?: boolean;
  /** Before the mode starts (no server yet): e.g. `legion run --no-attach` to make earlier runs. */
  readonly before?: (ctx: Pick<ModeContext, 'cli' | 'dir'>) => Promise<void>;
}

/** The status bar's first line: `legion · run <id> [(resumed)] · <mode> · …`. */
export const statusLine = (mode: Mode): RegExp => new RegExp(`^legion · run \\S+(?: \\(resumed\\))? · ${mode} · `, 'm');

/** Run `fn` in `mode` for the workspace `dir` (already initialised) with the faux `script`. */
export async function inMode(mode: Mode, dir: string, script: string, options: ModeOptions, fn: (ctx: ModeContext) => Promise<void>): Promise<void> {
  const { command, env } = legionTui(dir, script);
  const fullEnv = { PATH: process.env.PATH ?? '', HOME: dir, ...env };
  let server: ChildProcess | undefined;
  let log = '';
  const tuis: Tmux[] = [];
  const cli = (args: readonly string[]): SpawnSyncReturns<string> => spawnSync(process.execPath, [CLI, '--cwd', dir, ...args], { env: fullEnv, encoding: 'utf8' });
  try {
    await options.before?.({ dir, cli });
    if (mode === 'attached') {
      server = spawn(process.execPath, [CLI, '--cwd', dir, 'serve', ...(options.newRun ? ['--new'] : [])], { env: fullEnv, stdio: ['ignore', 'ignore', 'pipe'] });
      server.stderr!.on('data', (d) => { log += d; });
      await until(() => /serving run/.test(log) || server!.exitCode !== null, `the server to listen: ${log}`, 60_000);
      assert.equal(server.exitCode, null, `legion serve exited: ${log}`);
    }
    const ctx: ModeContext = {
      mode,
      dir,
      cli,
      async openTui() {
        const t = startTmux([...command, ...(mode === 'local' && options.newRun ? ['--new'] : [])], { ...env, HOME: dir });
        tuis.push(t);
        await t.waitFor(statusLine(mode), 30_000);
        return t;
      },
    };
    await fn(ctx);
    for (const t of tuis) await quitTui(t);
  } finally {
    for (const t of tuis) t.kill();
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await until(() => server!.exitCode !== null, 'the server to stop', 30_000).catch(() => server!.kill('SIGKILL'));
    }
  }
}
