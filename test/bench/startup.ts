/**
 * startup: the built CLI (`node dist/legion.js`) in a real terminal (a private tmux server,
 * 120×40) until its first full frame is on screen (FIRST_FRAME_MARKERS in harness.ts),
 * polling `capture-pane` every 2 ms. The time includes tmux spawning the process and the
 * poll granularity, so it slightly overstates the app's own start-up (reported as
 * `terminalOverheadMs`: the same path for a process that prints the marker at once).
 * Budget: median ≤ 200 ms. Without a TUI (or without tmux) the figure is NaN with a note.
 */
import { hasTmux, launchTui, openTmux, appEnv, prepareWorkspace, screenSummary, stats, waitForScreen, isFirstFrame, FIRST_FRAME_MARKERS, type BenchOptions } from './harness';
import { performance } from 'node:perf_hooks';

export async function run({ smoke, note }: BenchOptions): Promise<Record<string, number>> {
  if (!hasTmux()) {
    note?.('tmux is not installed: start-up not measured');
    return { firstFrameMs: NaN };
  }
  const warmup = smoke ? 0 : 2;
  const count = smoke ? 1 : 15;
  const timeoutMs = smoke ? 3_000 : 5_000;
  const ws = prepareWorkspace();
  const pane = openTmux({ width: 120, height: 40, env: appEnv(), cwd: ws.dir });
  try {
    const samples: number[] = [];
    for (let i = 0; i < warmup + count; i++) {
      const r = await launchTui(pane, { timeoutMs });
      if (!r.ok) {
        note?.(`TUI not measurable yet: ${r.reason}; screen: ${screenSummary(r.screen)}`);
        return { firstFrameMs: NaN };
      }
      if (i >= warmup) samples.push(r.ms);
    }
    // The harness's own share: spawn a process that prints the marker immediately.
    const overhead: number[] = [];
    for (let i = 0; i < (smoke ? 1 : 5); i++) {
      const since = performance.now();
      pane.respawn(`exec printf '%s\\n' '${FIRST_FRAME_MARKERS.join(' ')}'`);
      const r = await waitForScreen(pane, isFirstFrame, { since, timeoutMs });
      if (r.ok) overhead.push(r.ms);
    }
    const s = stats(samples);
    return { firstFrameMs: s.median, firstFrameP95Ms: s.p95, firstFrameMinMs: s.min, terminalOverheadMs: stats(overhead).median };
  } finally {
    pane.close();
    ws.cleanup();
  }
}
