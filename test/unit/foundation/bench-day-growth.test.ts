import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prng } from '../../helpers/prng';
import { CPU_GROWTH_LIMIT as LIMIT, cpuGrowth, theilSen, MIN_STEADY_WINDOWS, type DayWindow } from '../../bench/day-growth';

/** Deterministic noise in [-1, 1]. */
function noiseSource(seed: number): () => number {
  const next = prng(seed);
  return () => next() * 2 - 1;
}

interface MadeUpDay {
  /** CPU per turn of the steady state at its first window (ms). */
  readonly level?: number;
  /** CPU per turn at the last window ÷ at the first steady one (a line between them). */
  readonly growth?: number;
  /** Each window's CPU per turn off by up to ± this share (uniform). */
  readonly noise?: number;
  readonly seed?: number;
  /** Window index → factor on its CPU (a neighbour's burst). */
  readonly bursts?: Readonly<Record<number, number>>;
}

/**
 * A 300-turn day as the bench reads it: ten windows of 30 turns; the first three before any
 * compaction (histories still growing: lighter turns, 15 → 19 ms), steady from the fourth.
 */
function madeUpDay({ level = 20, growth = 1, noise = 0, seed = 1, bursts = {} }: MadeUpDay = {}): DayWindow[] {
  const next = noiseSource(seed);
  const summaries = [0, 0, 0, 2, 5, 8, 11, 14, 17, 20];
  const light = [15, 17, 19];
  return summaries.map((summariesBefore, i) => {
    const clean = i < 3 ? light[i]! : level * (1 + ((growth - 1) * (i - 3)) / 6);
    const perTurn = clean * (1 + noise * next()) * (bursts[i] ?? 1);
    return { fromTurn: i * 30, toTurn: (i + 1) * 30, cpuMs: perTurn * 30, summariesBefore };
  });
}

test('theilSen: the line through points on a line, and one point far off it does not move it', () => {
  const points = [1, 2, 3, 4, 5, 6, 7].map((x) => ({ x, y: 3 + 0.5 * x }));
  assert.deepEqual(theilSen(points), { slope: 0.5, intercept: 3 });
  const wild = points.map((p, i) => (i === 6 ? { x: p.x, y: 40 } : p));
  assert.deepEqual(theilSen(wild), { slope: 0.5, intercept: 3 });
  assert.ok(Number.isNaN(theilSen([{ x: 1, y: 1 }]).slope), 'one point: no slope');
});

/** How many of 500 made-up days (seeds 1–500) the check fails. */
const failedOf500 = (day: Omit<MadeUpDay, 'seed'>): number => {
  let over = 0;
  for (let seed = 1; seed <= 500; seed++) if (!(cpuGrowth(madeUpDay({ ...day, seed })).ratio <= LIMIT)) over += 1;
  return over;
};

test('day CPU growth: a flat steady state passes with every window off by up to ±8%; at ±10%, 99% of days pass', () => {
  assert.equal(failedOf500({ noise: 0.08 }), 0);
  const at10 = failedOf500({ noise: 0.1 });
  assert.ok(at10 <= 5, `flat days failed at ±10%: ${at10} of 500`);
  const exact = cpuGrowth(madeUpDay());
  assert.equal(exact.ratio, 1);
  assert.equal(exact.steadyFrom, 3);
});

test('day CPU growth: the lighter turns before the first compaction are not read as growth', () => {
  // 15 ms per turn in the first tenth, 20 in the steady state: the first tenth ÷ the last (the
  // statistic of before) says 1.33; the steady state is flat.
  const day = madeUpDay();
  const g = cpuGrowth(day);
  assert.ok(g.perTurnMs[9]! / g.perTurnMs[0]! > 1.3);
  assert.equal(g.ratio, 1);
});

test('day CPU growth: a real growth per turn fails — 1.3× across the steady state: always without noise, 98% of days at ±5%, 80% at ±10%', () => {
  assert.ok(Math.abs(cpuGrowth(madeUpDay({ growth: 1.3 })).ratio - 1.3) < 1e-9);
  const at5 = failedOf500({ growth: 1.3, noise: 0.05 });
  assert.ok(at5 >= 490, `days growing 1.3× caught at ±5%: ${at5} of 500`);
  const at10 = failedOf500({ growth: 1.3, noise: 0.1 });
  assert.ok(at10 >= 400, `days growing 1.3× caught at ±10%: ${at10} of 500`);
  // A leak that grows with every turn from the server's start: 1.5× over the day.
  const leak = madeUpDay().map((w) => ({ ...w, cpuMs: 20 * (1 + (0.5 * (w.fromTurn + w.toTurn)) / 2 / 300) * 30 }));
  assert.ok(cpuGrowth(leak).ratio > LIMIT, `a leak growing 1.5× over the day: ${cpuGrowth(leak).ratio}`);
});

test('day CPU growth: one window 60% over (a neighbour burst) does not fail a flat day, wherever it falls', () => {
  for (let at = 3; at <= 9; at++) {
    for (let seed = 1; seed <= 50; seed++) {
      const g = cpuGrowth(madeUpDay({ noise: 0.03, seed, bursts: { [at]: 1.6 } }));
      assert.ok(g.ratio <= LIMIT, `burst ×1.6 at window ${at}, seed ${seed}: ${g.ratio}`);
      if (at === 9) assert.ok(g.perTurnMs[9]! / g.perTurnMs[3]! > LIMIT, 'the two windows alone would have failed it');
    }
  }
});

test('day CPU growth: no steady state to judge (no compaction, too few windows after it) or a line through zero fails the check', () => {
  const noCompaction = madeUpDay().map((w) => ({ ...w, summariesBefore: 0 }));
  assert.ok(Number.isNaN(cpuGrowth(noCompaction).ratio));
  assert.equal(cpuGrowth(noCompaction).steadyFrom, -1);
  const late = madeUpDay().map((w, i) => ({ ...w, summariesBefore: i < 10 - MIN_STEADY_WINDOWS + 1 ? 0 : 1 }));
  assert.ok(Number.isNaN(cpuGrowth(late).ratio), 'fewer steady windows than the minimum');
  const enough = madeUpDay().map((w, i) => ({ ...w, summariesBefore: i < 10 - MIN_STEADY_WINDOWS ? 0 : 1 }));
  assert.equal(cpuGrowth(enough).ratio, 1);
  const plunge = madeUpDay().map((w, i) => ({ ...w, cpuMs: i < 3 ? w.cpuMs : (60 - 10 * (i - 3)) * 30 }));
  const g = cpuGrowth(plunge);
  assert.ok(g.firstMs > 0 && g.lastMs <= 0 && g.ratio <= 0, 'a line falling to zero is no growth');
  const rising = madeUpDay().map((w, i) => ({ ...w, cpuMs: i < 3 ? w.cpuMs : (-30 + 10 * (i - 3)) * 30 }));
  assert.equal(cpuGrowth(rising).ratio, Infinity, 'a line starting at zero or below: no level to divide by');
});
