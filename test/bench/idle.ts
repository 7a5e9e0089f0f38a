/**
 * idle: CPU time the TUI uses while nothing happens. Starts the built CLI in tmux, waits
 * for the first full frame and a settle period, then reads the process's CPU time from
 * /proc before and after a 5 s window (all threads, ns precision from schedstat; falls
 * back to /proc/<pid>/stat clock ticks). Budget: ≤ 20 ms per 5 s (median of 3 windows).
 * Without a TUI (or without tmux) the figure is NaN with a note.
 */
import { readFileSync } from 'node:fs';
import { appEnv, hasTmux, launchTui, openTmux, prepareWorkspace, processCpuMs, screenSummary, sleep, stats, type BenchOptions } from './harness';
import { exited } from './harness';

export async function run({ smoke, note }: BenchOptions): Promise<Record<string, number>> {
  if (!hasTmux()) {
    note?.('tmux is not installed: idle CPU not measured');
    return { cpuMs5s: NaN };
  }
  const windowMs = smoke ? 300 : 5_000;
  const settleMs = smoke ? 100 : 1_000;
  const windows = smoke ? 1 : 3;
  const ws = prepareWorkspace();
  const pane = openTmux({ width: 120, height: 40, env: appEnv(), cwd: ws.dir });
  let pid: number | null = null;
  try {
    const r = await launchTui(pane, { timeoutMs: smoke ? 3_000 : 5_000 });
    if (!r.ok) {
      note?.(`TUI not measurable yet: ${r.reason}; screen: ${screenSummary(r.screen)}`);
      return { cpuMs5s: NaN };
    }
    pid = r.pid;
    if (pid === null || !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('legion')) {
      throw new Error(`the pane's process (${pid}) is not the app`);
    }
    await sleep(settleMs);
    const samples: number[] = [];
    let precise = true;
    for (let i = 0; i < windows; i++) {
      const before = processCpuMs(pid);
      await sleep(windowMs);
      const after = processCpuMs(pid);
      if (!before || !after) throw new Error('the app exited while idle');
      if (before.precise === null || after.precise === null) precise = false;
      const used = precise ? after.precise! - before.precise! : after.ticks - before.ticks;
      samples.push((used * 5_000) / windowMs);
    }
    if (!precise) note?.('CPU from /proc/<pid>/stat clock ticks (10 ms resolution)');
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
    return { cpuMs5s: stats(samples).median, cpuMs5sMax: stats(samples).max, idleRssMb: rss };
  } finally {
    pane.close();
    await exited(pid);
    ws.cleanup();
  }
}
