/**
 * startup: the built CLI as users start it (`legion`, dist/legion: Node from the build's V8
 * start-up snapshot, scripts/snapshot.mjs) in a real terminal (a private tmux server,
 * 120×40) until its first full frame is on screen (FIRST_FRAME_MARKERS in harness.ts),
 * polling `capture-pane` every 2 ms. The time includes tmux spawning the process and the
 * poll granularity, so it slightly overstates the app's own start-up (reported as
 * `terminalOverheadMs`: the same path for a process that prints the marker at once).
 * Budget: median ≤ 200 ms. Without a TUI (or without tmux) the figure is NaN with a note.
 *
 * `plainFirstFrameMs`: `node dist/legion.js`, the launcher's fallback (no snapshot for this
 * Node, or an npm package), which runs the bundle through V8's code cache
 * (scripts/legion-loader.mjs), written by the first start after a build: the warm-up starts
 * do, as a user's first start does. `uncachedFirstFrameMs` is that start without the cache
 * (LEGION_COMPILE_CACHE=0), as the very first start after an install or upgrade. Both
 * reported, not judged.
 * `firstFrameNetMs`: the median first frame minus the median of a bare `node -e` printing the
 * markers (`bareNodeMs`), started alternately with the app in the same pane: the app's own
 * share, the machine at that moment in both halves.
 */
import { hasTmux, launchTui, openTmux, appEnv, prepareWorkspace, screenSummary, stats, waitForScreen, isFirstFrame, legionCommand, exited, stopPaneProcess, FIRST_FRAME_MARKERS, type BenchOptions, type TmuxPane } from './harness';
import { performance } from 'node:perf_hooks';

export async function run({ smoke, note }: BenchOptions): Promise<Record<string, number>> {
  if (!hasTmux()) {
    note?.('tmux is not installed: start-up not measured');
    return { firstFrameMs: NaN };
  }
  const warmup = smoke ? 1 : 3;
  const count = smoke ? 1 : 15;
  const uncached = smoke ? 1 : 5;
  const timeoutMs = smoke ? 3_000 : 5_000;
  const ws = prepareWorkspace();
  const pane = openTmux({ width: 120, height: 40, env: appEnv(), cwd: ws.dir });
  let lastPid: number | null = null;
  try {
    // The harness's own share, first: a process that prints the marker at once (after a TUI,
    // the pane would still be on the alternate screen the killed TUI left it on).
    const overhead: number[] = [];
    for (let i = 0; i < (smoke ? 1 : 5); i++) {
      const since = performance.now();
      // It stays alive: tmux may drop the last output of a process that exits at once.
      pane.respawn(`printf '%s\\n' '${FIRST_FRAME_MARKERS.join(' ')}'; exec sleep 60`);
      const r = await waitForScreen(pane, isFirstFrame, { since, timeoutMs });
      if (r.ok) overhead.push(r.ms);
    }
    const samples: number[] = [];
    const bareNode: number[] = [];
    for (let i = 0; i < warmup + count; i++) {
      const r = await launchTui(pane, { timeoutMs });
      if (!r.ok) {
        note?.(`TUI not measurable yet: ${r.reason}; screen: ${screenSummary(r.screen)}`);
        return { firstFrameMs: NaN };
      }
      lastPid = r.pid;
      if (i >= warmup) samples.push(r.ms);
      // Interleaved with the app's starts: a bare Node that prints the marker at once (`node -e`),
      // the floor no Node program can go below on this machine at this moment.
      const bare = await launch(pane, BARE_NODE, timeoutMs);
      lastPid = pane.pid();
      if (bare.ok && i >= warmup) bareNode.push(bare.ms);
    }
    const cold: number[] = [];
    const plain: number[] = [];
    // The plain bundle's code cache (the launcher's starts write none): written by this start.
    await launch(pane, legionCommand(), timeoutMs);
    lastPid = pane.pid();
    for (let i = 0; i < uncached; i++) {
      const r = await launch(pane, `LEGION_COMPILE_CACHE=0 ${legionCommand()}`, timeoutMs);
      if (r.ok) cold.push(r.ms);
      lastPid = pane.pid();
      const p = await launch(pane, legionCommand(), timeoutMs);
      if (p.ok) plain.push(p.ms);
      lastPid = pane.pid();
    }
    const s = stats(samples);
    const bare = stats(bareNode);
    return {
      firstFrameMs: s.median,
      bareNodeMs: bare.median,
      firstFrameNetMs: s.median - bare.median,
      firstFrameP95Ms: s.p95,
      firstFrameMinMs: s.min,
      plainFirstFrameMs: stats(plain).median,
      uncachedFirstFrameMs: stats(cold).median,
      terminalOverheadMs: stats(overhead).median,
    };
  } finally {
    pane.close();
    await exited(lastPid);
    ws.cleanup();
  }
}

/** `node -e` printing the first-frame markers and staying alive (tmux may drop the last output of a process that exits). */
const BARE_NODE = `exec ${JSON.stringify(process.execPath)} -e ${JSON.stringify(`console.log(${JSON.stringify(FIRST_FRAME_MARKERS.join(' '))}); setTimeout(() => {}, 60000)`).replace(/\$/g, '\\$')}`;

async function launch(pane: TmuxPane, command: string, timeoutMs: number) {
  await stopPaneProcess(pane);
  const since = performance.now();
  pane.respawn(command);
  return waitForScreen(pane, isFirstFrame, { since, timeoutMs });
}
