/**
 * Does serve's CPU per turn grow as the working day goes on? The statistic of the day bench's
 * CPU check (docs/performance.md#the-day-bench), apart from the bench so it can be tested on
 * made-up days (test/unit/foundation/bench-day-growth.test.ts).
 *
 * The day is cut into windows (a tenth of its turns each), every one measured the same way: it
 * begins and ends at an idle point (the bench's lanes wait until no turn runs), so each window's
 * CPU is the whole work of exactly the turns that ended in it, net of the bench's own forced GCs.
 *
 * A session's history grows until its first compaction, so the day's first turns are lighter by
 * design; from the first compaction on the histories only saw-tooth between compactions (the
 * steady state). The growth is judged over the steady windows only, and not from two windows
 * alone (one window's CPU moves with what else the machine runs, a natural GC or a compaction
 * falling in it): the Theil–Sen line (the median of the pairwise slopes, so one window off the
 * line does not move it) through every steady window's CPU per turn, read at the middle of the
 * last window and of the first steady one. A real growth per turn (a leak, a history re-read)
 * tilts every pair; a neighbour's burst moves one window.
 */

/** One window of the day. */
export interface DayWindow {
  /** Turns done when the window began and when it ended (both idle points). */
  readonly fromTurn: number;
  readonly toTurn: number;
  /** Serve's CPU over the window (ms), net of the bench's forced GCs. */
  readonly cpuMs: number;
  /** Compaction summaries the model had written when the window began. */
  readonly summariesBefore: number;
}

export interface CpuGrowth {
  /** CPU per turn of every window (ms), in order. */
  readonly perTurnMs: number[];
  /** Index of the first steady window (the first that began after a compaction); -1: none. */
  readonly steadyFrom: number;
  /** The trend line's slope, ms per turn per turn (NaN: too few steady windows). */
  readonly slope: number;
  /** The line at the middle of the first steady window and of the last window (ms per turn). */
  readonly firstMs: number;
  readonly lastMs: number;
  /** lastMs ÷ firstMs: NaN with fewer than `MIN_STEADY_WINDOWS` steady windows (the check fails). */
  readonly ratio: number;
}

/** The day's limit: the trend's last value ÷ its first (test/bench/day.ts, docs/performance.md). */
export const CPU_GROWTH_LIMIT = 1.2;

/** Fewer steady windows than this is no trend (the check fails rather than guess). */
export const MIN_STEADY_WINDOWS = 5;

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The Theil–Sen line through `points`: slope = median of the pairwise slopes, intercept = median of y − slope·x. */
export function theilSen(points: ReadonlyArray<{ readonly x: number; readonly y: number }>): { slope: number; intercept: number } {
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i++) {
    for (let j = i + 1; j < points.length; j++) {
      const dx = points[j]!.x - points[i]!.x;
      if (dx !== 0) slopes.push((points[j]!.y - points[i]!.y) / dx);
    }
  }
  if (slopes.length === 0) return { slope: NaN, intercept: NaN };
  const slope = median(slopes);
  return { slope, intercept: median(points.map((p) => p.y - slope * p.x)) };
}

/** The day's CPU growth from its windows (see the file's comment). */
export function cpuGrowth(windows: readonly DayWindow[]): CpuGrowth {
  const perTurnMs = windows.map((w) => w.cpuMs / Math.max(1, w.toTurn - w.fromTurn));
  const steadyFrom = windows.findIndex((w) => w.summariesBefore > 0);
  const steady = steadyFrom < 0 ? [] : windows.slice(steadyFrom).filter((w) => w.toTurn > w.fromTurn);
  if (steady.length < MIN_STEADY_WINDOWS) return { perTurnMs, steadyFrom, slope: NaN, firstMs: NaN, lastMs: NaN, ratio: NaN };
  const middle = (w: DayWindow): number => (w.fromTurn + w.toTurn) / 2;
  const line = theilSen(steady.map((w) => ({ x: middle(w), y: w.cpuMs / (w.toTurn - w.fromTurn) })));
  const firstMs = line.intercept + line.slope * middle(steady[0]!);
  const lastMs = line.intercept + line.slope * middle(steady.at(-1)!);
  // A line that reaches zero or below at the first steady window is no level to divide by: fail.
  const ratio = firstMs > 0 ? lastMs / firstMs : Infinity;
  return { perTurnMs, steadyFrom, slope: line.slope, firstMs, lastMs, ratio };
}
