/**
 * Start-up A/B (a helper for docs/performance.md#start-up, not a benchmark): first full frame of
 * several commands started alternately in one tmux pane (120×40) in a `legion init` workspace,
 * with a bare `node -e` among them; prints the median and min of each, wall clock and the CPU time the process had used when its frame was seen (less sensitive to a loaded machine).
 * Usage: npx tsx test/bench/ab-startup.ts <rounds> '<label>=<shell command>' …
 * (a command runs in the workspace; `$BUNDLE` is dist/legion.js; each is started twice as
 * warm-up first, so code caches are written).
 */
import { performance } from 'node:perf_hooks';
import { processCpuMs, appEnv, BUNDLE, isFirstFrame, openTmux, prepareWorkspace, stats, stopPaneProcess, waitForScreen, FIRST_FRAME_MARKERS, exited } from './harness';

const rounds = Number(process.argv[2] ?? 10);
const bare = `exec ${JSON.stringify(process.execPath)} -e ${JSON.stringify(`console.log(${JSON.stringify(FIRST_FRAME_MARKERS.join(' '))}); setTimeout(() => {}, 60000)`).replace(/\$/g, '\\$')}`;
const commands: [string, string][] = [['bare', bare], ...process.argv.slice(3).map((a) => {
  const i = a.indexOf('=');
  return [a.slice(0, i), a.slice(i + 1).replace(/\$BUNDLE/g, BUNDLE).replace(/\$NODE/g, process.execPath)] as [string, string];
})];
const ws = prepareWorkspace();
const pane = openTmux({ width: 120, height: 40, env: appEnv(), cwd: ws.dir });
const times = new Map<string, number[]>(commands.map(([l]) => [l, []]));
const cpu = new Map<string, number[]>(commands.map(([l]) => [l, []]));
try {
  for (let r = -2; r < rounds; r++) {
    for (const [label, command] of commands) {
      await stopPaneProcess(pane);
      const since = performance.now();
      pane.respawn(command);
      const res = await waitForScreen(pane, isFirstFrame, { since, timeoutMs: 8000 });
      if (!res.ok) throw new Error(`${label}: ${res.reason}: ${res.screen.slice(0, 400)}`);
      const pid = pane.pid();
      const used = pid === null ? null : processCpuMs(pid);
      if (r >= 0) {
        times.get(label)!.push(res.ms);
        if (used?.precise != null) cpu.get(label)!.push(used.precise);
      }
    }
  }
} finally {
  const pid = pane.dead() ? null : pane.pid();
  pane.close();
  await exited(pid);
  ws.cleanup();
}
const b = stats(times.get('bare')!).median;
for (const [label, t] of times) {
  const s = stats(t);
  const c = stats(cpu.get(label)!);
  console.log(`${label.padEnd(12)} median ${s.median.toFixed(1)} ms  net ${(s.median - b).toFixed(1)}  min ${s.min.toFixed(1)}  n ${t.length}  cpu ${c.median.toFixed(1)} ms (min ${c.min.toFixed(1)})`);
}
