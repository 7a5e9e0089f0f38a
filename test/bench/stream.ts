/**
 * stream: 4 lanes streaming 1,000 deltas each at once through the real App (Ink's real,
 * throttled renderer on fake TTY streams, production React), driven by a fake core's bus.
 * Deltas arrive every 4 ms per lane (a fast model, 250 deltas/s per lane).
 * Figures: CPU time of the process per delta while the four lanes stream (everything: reduce,
 * frames, layout, output), then, in a second pass, the time from a keystroke to the frame
 * showing it while they stream again.
 * Budgets: ≤ 0.35 ms CPU per delta; keystroke-to-frame p95 ≤ 16 ms; no keystroke without a frame
 * (a lost one makes the p95 NaN and `lostKeystrokes` > 0: the bench fails).
 */
import { performance } from 'node:perf_hooks';
import type { BenchOptions } from './harness';
import { sleep } from './harness';
import { keystrokeFigures } from './keystrokes';

/** One delta per lane every ROUND_MS: 250 deltas/s per lane, faster than models stream. */
const ROUND_MS = 4;
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'lambda', 'sigma', 'omega', 'kappa', 'theta', 'zeta', 'code', '`inline`', '**bold**', 'list', 'item'];

export async function run({ smoke, note }: BenchOptions): Promise<Record<string, number>> {
  // Before React and Ink load: production React, and Ink not in CI mode (it skips frames there).
  process.env.NODE_ENV = 'production';
  delete process.env.CI;
  const { mountBenchApp } = await import('../helpers/tui-bench');
  const { createFakeCore, open, sessionIdOf, status, userMessage } = await import('../helpers/fake-core');

  const perLane = smoke ? 100 : 1000;
  const core = createFakeCore();
  const sessions = [sessionIdOf('user', 'ur-agent'), ...['a', 'b', 'c'].map((n) => sessionIdOf('ur-agent', 'scribe', n))];
  core.emit(open('user', 'ur-agent'));
  const app = mountBenchApp(core, { columns: 160, rows: 48 });
  try {
    for (const n of ['a', 'b', 'c']) core.emit(open('ur-agent', 'scribe', n));
    for (const id of sessions) {
      core.emit(userMessage(id, 'Please write a long answer.'));
      core.emit(status(id, id.includes('scribe') ? 'scribe' : 'ur-agent', 'thinking'));
    }
    await sleep(200);

    // Phase 1: the four lanes stream; CPU per delta (no typing).
    let word = 0;
    const stream = async (deltasPerLane: number): Promise<void> => {
      const t0 = performance.now();
      for (let i = 0; i < deltasPerLane; i++) {
        for (const id of sessions) {
          const text = (i % 40 === 39 ? '\n\n' : ' ') + WORDS[word++ % WORDS.length];
          core.emit({ type: 'text-delta', sessionId: id, participantId: id.includes('scribe') ? 'scribe' : 'ur-agent', text });
        }
        const wait = t0 + (i + 1) * ROUND_MS - performance.now(); // pace: one delta per lane per round
        if (wait > 0) await sleep(wait);
      }
    };
    const cpu0 = process.cpuUsage();
    const frames0 = { ...app.frames };
    const t0 = performance.now();
    await stream(perLane);
    await sleep(100); // the last frame
    const cpu = process.cpuUsage(cpu0);
    const wallMs = performance.now() - t0;
    const frames = app.frames.count - frames0.count;
    const inkMs = app.frames.renderMs - frames0.renderMs;

    // Phase 2: type while they stream; keystroke to the frame showing it. The composer shows
    // `q` × n (never in the stream); Ctrl+U keeps the draft short.
    const latencies: number[] = [];
    let typing = true;
    const typer = (async () => {
      let typed = 0;
      await sleep(100);
      while (typing) {
        typed += 1;
        const want = 'q'.repeat(typed);
        // A keystroke without a frame is NaN and fails the bench (keystrokes.ts), never dropped.
        latencies.push(await app.keyToFrame('q', (chunk) => chunk.includes(want) && !chunk.includes(`${want}q`)).catch(() => NaN));
        if (typed >= 40) { typed = 0; app.stdin.send('\x15'); await sleep(30); }
        await sleep(45 + Math.random() * 30);
      }
    })();
    await stream(smoke ? 100 : 1000);
    typing = false;
    await typer;

    const deltas = perLane * sessions.length;
    const keys = keystrokeFigures(latencies);
    if (keys.lostKeystrokes > 0) note?.(`${keys.lostKeystrokes} of ${keys.keystrokes} keystrokes never got a frame showing them`);
    return {
      cpuPerDeltaMs: (cpu.user + cpu.system) / 1000 / deltas,
      ...keys,
      deltas,
      wallMs,
      frames,
      cpuPerFrameMs: (cpu.user + cpu.system) / 1000 / frames,
      inkRenderPerFrameMs: inkMs / frames,
    };
  } finally {
    app.unmount();
  }
}
