import { stats } from './harness';

/**
 * Keystroke-to-frame figures from per-keystroke latencies, where NaN marks a keystroke that
 * never got a frame showing it. A lost keystroke is a failure, not a sample to drop: the p95
 * is NaN then (which never meets a budget) and `lostKeystrokes` counts them (budget 0).
 */
export function keystrokeFigures(latencies: readonly number[]): { keyToFrameP95Ms: number; keyToFrameMedianMs: number; keystrokes: number; lostKeystrokes: number } {
  const shown = latencies.filter((ms) => Number.isFinite(ms));
  const lost = latencies.length - shown.length;
  const k = stats(shown);
  return { keyToFrameP95Ms: lost > 0 ? NaN : k.p95, keyToFrameMedianMs: k.median, keystrokes: latencies.length, lostKeystrokes: lost };
}
