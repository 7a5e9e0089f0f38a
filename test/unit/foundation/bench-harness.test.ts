import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { budgetFor, figurePrefix, regressed, unitOf, withinBudget, BENCHMARKS, BUDGETS } from '../../bench/budgets';
import { percentile, stats } from '../../bench/harness';
import { baselineFrom, checkResults, type Baseline } from '../../bench/check';
import type { BenchResult, Results } from '../../bench/results';
import { withTempDir } from '../../helpers/tmp';

test('bench stats: median, nearest-rank percentiles, min/max; empty is NaN', () => {
  const s = stats([5, 1, 4, 2, 3]);
  assert.deepEqual({ ...s }, { n: 5, median: 3, mean: 3, min: 1, max: 5, p5: 1, p95: 5 });
  assert.equal(stats([1, 2, 3, 10]).median, 2.5);
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(percentile(hundred, 95), 95);
  assert.equal(percentile(hundred, 5), 5);
  assert.ok(Number.isNaN(stats([]).median));
});

test('bench budgets: every benchmark has a budget; names, wildcards, directions', () => {
  for (const name of BENCHMARKS) assert.ok(BUDGETS.some((b) => b.figure.startsWith(`${figurePrefix(name)}.`)), name);
  assert.equal(figurePrefix('long-session'), 'longSession');
  assert.equal(budgetFor('longSession.scrollP95Ms')?.budget, 16);
  assert.equal(budgetFor('longSession.rssMb100k')?.budget, 150);
  assert.equal(budgetFor('longSession.scrollMedianMs'), undefined);
  assert.equal(budgetFor('loop.turnsPerSecond')?.direction, 'higher');
  const startup = budgetFor('startup.firstFrameMs')!;
  assert.equal(withinBudget(200, startup), true);
  assert.equal(withinBudget(200.1, startup), false);
  assert.equal(withinBudget(NaN, startup), false);
  const loop = budgetFor('loop.turnsPerSecond')!;
  assert.equal(withinBudget(2000, loop), true);
  assert.equal(withinBudget(1999, loop), false);
});

test('bench regression: more than 20% (and more than the slack) worse than the baseline', () => {
  assert.equal(regressed(120, 100, { direction: 'lower' }), false);
  assert.equal(regressed(121, 100, { direction: 'lower' }), true);
  assert.equal(regressed(121, 100, { direction: 'lower', slack: 30 }), false, 'within the absolute slack');
  assert.equal(regressed(80, 100, { direction: 'higher' }), false);
  assert.equal(regressed(79, 100, { direction: 'higher' }), true);
  assert.equal(regressed(10, 100, { direction: 'lower' }), false, 'better is never a regression');
  assert.equal(regressed(NaN, 100, { direction: 'lower' }), true);
});

test('bench units are guessed from figure names', () => {
  assert.equal(unitOf('append.at10kMicros'), 'µs');
  assert.equal(unitOf('idle.cpuMs5s'), 'ms');
  assert.equal(unitOf('startup.firstFrameP95Ms'), 'ms');
  assert.equal(unitOf('longSession.rssMb100k'), 'MB');
  assert.equal(unitOf('loop.turnsPerSecond'), '/s');
  assert.equal(unitOf('resume.messages'), undefined);
});

const machine = { cpu: 'Test CPU', cores: 2, memoryGb: 4, os: 'Linux', arch: 'x64' };
function ok(figures: Record<string, number | null>, extra: Partial<BenchResult> = {}): BenchResult {
  const judged = Object.fromEntries(Object.entries(figures).map(([k, value]) => {
    const b = budgetFor(k);
    return [k, b ? { value, unit: b.unit, budget: b.budget, direction: b.direction, label: b.label, pass: value !== null && withinBudget(value, b) } : { value, pass: null }];
  }));
  return { status: 'ok', date: 'd', smoke: false, notes: [], figures: judged, ...extra };
}
/** A figure within budget for each budgeted, non-pattern figure of a benchmark. */
function passingFigures(name: string): Record<string, number> {
  const prefix = `${figurePrefix(name)}.`;
  return Object.fromEntries(BUDGETS.filter((b) => b.figure.startsWith(prefix) && !b.figure.includes('*'))
    .map((b) => [b.figure, b.direction === 'lower' ? b.budget * 0.5 : b.budget * 2]));
}
function resultsWith(benchmarks: Record<string, BenchResult>): Results {
  return { version: 1, date: '2026-01-01T00:00:00.000Z', machine, node: 'v20', benchmarks };
}

test('bench:check: passes within budget and baseline; fails over budget, regressed, unmeasured, missing', () => {
  const baseline: Baseline = { date: 'd', machine, node: 'v20', figures: { 'append.ratio10kTo10': 1.0, 'startup.firstFrameMs': 100 } };
  const good = resultsWith({ append: ok({ 'append.ratio10kTo10': 1.05, 'append.at10Micros': 8 }), startup: ok({ 'startup.firstFrameMs': 110, 'startup.firstFrameNetMs': 50 }) });
  assert.deepEqual(checkResults(good, baseline, ['append', 'startup']).failures, []);

  const bad = resultsWith({
    append: ok({ 'append.ratio10kTo10': 1.3 }),
    startup: ok({ 'startup.firstFrameMs': 150, 'startup.firstFrameNetMs': 50 }),
    idle: ok({ 'idle.cpuMs5s': null }, { notes: ['TUI not built'] }),
    stream: { status: 'not-implemented', date: 'd', smoke: false, notes: [], figures: {} },
    loop: { status: 'error', date: 'd', smoke: false, notes: [], figures: {}, error: 'Error: boom\n  at x' },
    rules: ok({ ...passingFigures('rules'), 'rules.perDecisionMicros': 12 }),
    resume: ok({ 'resume.readyMs': 10 }, { smoke: true }),
    'long-session': ok({ 'longSession.rssMb100k': 100 }),
    sandbox: ok({ 'sandbox.overheadMs': 20 }),
    checkpoints: ok({ 'checkpoints.noChangeMs': 1, 'checkpoints.fewChangedMs': 20 }),
    redact: ok({ 'redact.worst1MbMs': 12 }),
    context: ok({ 'context.overflows': 0, 'context.p95RequestShare': 0.58, 'context.inputRatio': 0.04, 'context.decideMicros10k': 2 }),
    mcp: ok({ 'mcp.overheadMs': 0.2 }),
    remote: ok({ 'remote.sseP95Ms': 0.4 }),
    serve: ok({ 'serve.latencyP95Ms': 1, 'serve.cpuRatio': 1.1, 'serve.clients20MaxBehindMs': 10 }),
    workflows: ok({ 'workflows.fanoutRatio': 0.45 }),
    worktrees: ok({ 'worktrees.createMs': 200, 'worktrees.merge20Ms': 50 }),
    engine: ok(passingFigures('engine')),
    day: ok({
      'day.notDone': 0, 'day.overflows': 0, 'day.maxRequestShare': 0.6, 'day.p95RequestShare': 0.57, 'day.rssGrowth': 1.2, 'day.cpuPerTurnRatio': 0.9,
      'day.legionGrowthRatio': 1.05, 'day.messages': 6000, 'day.keyToFrameP95Ms': 9, 'day.serverIdleCpuMs5s': 0.1, 'day.tuiIdleCpuMs5s': 0.1,
    }),
  });
  // Every other benchmark the harness knows passes (stream-sdk is the one left out on purpose).
  for (const name of BENCHMARKS) {
    if (name in bad.benchmarks || name === 'stream-sdk') continue;
    bad.benchmarks[name] = ok(passingFigures(name));
  }
  const { failures } = checkResults(bad, baseline);
  const text = failures.join('\n');
  assert.match(text, /append\.ratio10kTo10 = 1\.30 ×: more than 20% worse than the baseline 1\.00/);
  assert.match(text, /startup\.firstFrameMs = 150 ms: more than 20% worse than the baseline 100/);
  assert.match(text, /idle\.cpuMs5s = NaN ms: not measured \(TUI not built\)/);
  assert.match(text, /stream: not yet implemented/);
  assert.match(text, /loop: the benchmark failed: Error: boom$/m);
  assert.match(text, /rules\.perDecisionMicros = 12\.00 µs: over budget \(≤ 10 µs\)/);
  assert.match(text, /resume: results are from smoke mode/);
  assert.match(text, /longSession\.\*P95Ms: not reported by the long-session benchmark/);
  assert.match(text, /stream-sdk: not run/);
  assert.equal(failures.length, 9, text);
});

test('bench:check: keys in results carry the prefix; baselineFrom keeps finite, non-smoke figures', () => {
  const results = resultsWith({
    append: ok({ 'append.ratio10kTo10': 1.1, 'append.at10Micros': 8 }),
    idle: ok({ 'idle.cpuMs5s': null }),
    resume: ok({ 'resume.readyMs': 10 }, { smoke: true }),
  });
  const base = baselineFrom(results, { date: 'old', machine, node: 'v18', figures: { 'rules.perDecisionMicros': 3 } });
  assert.deepEqual(base.figures, { 'rules.perDecisionMicros': 3, 'append.ratio10kTo10': 1.1, 'append.at10Micros': 8 });
  assert.equal(base.node, 'v20');
});

test('perf-table: prints a markdown table with the machine line', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'results.json');
    await writeFile(file, JSON.stringify(resultsWith({
      startup: ok({ 'startup.firstFrameMs': null }, { notes: ['TUI not built'] }),
      stream: { status: 'not-implemented', date: 'd', smoke: false, notes: [], figures: {} },
      append: ok({ 'append.ratio10kTo10': 1.02, 'append.at10Micros': 8.1 }),
      loop: ok({ 'loop.turnsPerSecond': 12345 }),
    })));
    const r = spawnSync(process.execPath, ['scripts/perf-table.mjs', file], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines[0], '| Benchmark | What | Measured | Budget | |');
    assert.ok(lines.includes('| startup | built CLI to first full frame (tmux) | n/a | ≤ 200 ms | ✗ |'), r.stdout);
    assert.ok(lines.includes('|  | note: TUI not built |  |  |  |'), r.stdout);
    assert.ok(lines.includes('| stream | — | not yet implemented |  |  |'), r.stdout);
    assert.ok(lines.includes('| append | append at 10,000 lines ÷ append at 10 | 1.02× | ≤ 1.5× | ✓ |'), r.stdout);
    assert.ok(lines.includes('| loop | faux-provider agent turns per second | 12,345 turns/s | ≥ 2,000 turns/s | ✓ |'), r.stdout);
    assert.ok(!r.stdout.includes('at10Micros'), 'unbudgeted figures only with --all');
    assert.equal(lines[lines.length - 1], 'Measured on Test CPU, 2 cores, 4 GB RAM, Linux, Node v20, 2026-01-01 (`npm run bench`; medians).');

    // --write replaces the table between the markers of the page, and only there.
    const page = join(dir, 'performance.md');
    await writeFile(page, 'intro\n<!-- perf-table:start -->\nold table\n<!-- perf-table:end -->\noutro\n');
    const written = spawnSync(process.execPath, ['scripts/perf-table.mjs', `--write=${page}`, file], { encoding: 'utf8' });
    assert.equal(written.status, 0, written.stderr);
    const text = await readFile(page, 'utf8');
    assert.equal(text, `intro\n<!-- perf-table:start -->\n${r.stdout}<!-- perf-table:end -->\noutro\n`);
    await writeFile(page, 'no markers\n');
    const unmarked = spawnSync(process.execPath, ['scripts/perf-table.mjs', `--write=${page}`, file], { encoding: 'utf8' });
    assert.equal(unmarked.status, 1);
    assert.match(unmarked.stderr, /no <!-- perf-table:start -->/);
    const missing = spawnSync(process.execPath, ['scripts/perf-table.mjs', join(dir, 'none.json')], { encoding: 'utf8' });
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /cannot read .*none\.json/);
  });
});
