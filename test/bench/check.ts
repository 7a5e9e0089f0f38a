/**
 * `npm run bench:check [-- <name>...]`: fail (exit 1) when a budgeted figure in results.json
 * is over its budget, was not measured (missing, NaN, error, not implemented), or is more
 * than 20% (and more than its `slack`) worse than test/bench/baseline.json.
 * `npm run bench:check -- --update-baseline` copies the measured figures into baseline.json.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCHMARKS, BUDGETS, budgetFor, figurePrefix, regressed, withinBudget, type Budget } from './budgets';
import { readResults, type Results } from './results';

const HERE = dirname(fileURLToPath(import.meta.url));
export const BASELINE_FILE = join(HERE, 'baseline.json');

export interface Baseline {
  readonly date: string;
  readonly machine: Results['machine'];
  readonly node: string;
  /** Figure key → value. */
  readonly figures: Record<string, number>;
}

export interface CheckOutcome {
  readonly failures: string[];
  readonly passes: string[];
}

/** Judge `results` against the budgets and `baseline` (pure; used by the CLI and its test). */
export function checkResults(results: Results, baseline: Baseline | null, names: readonly string[] = BENCHMARKS): CheckOutcome {
  const failures: string[] = [];
  const passes: string[] = [];
  for (const name of names) {
    const bench = results.benchmarks[name];
    const prefix = figurePrefix(name);
    const budgets = BUDGETS.filter((b) => b.figure.startsWith(`${prefix}.`));
    if (!bench) {
      failures.push(`${name}: not run (npm run bench -- ${name})`);
      continue;
    }
    if (bench.status === 'not-implemented') {
      failures.push(`${name}: not yet implemented (${budgets.map((b) => b.figure).join(', ')} unmeasured)`);
      continue;
    }
    if (bench.status === 'error') {
      failures.push(`${name}: the benchmark failed: ${(bench.error ?? '').split('\n')[0]}`);
      continue;
    }
    if (bench.smoke) {
      failures.push(`${name}: results are from smoke mode (tiny sizes); run npm run bench`);
      continue;
    }
    const judged = new Set<Budget>();
    for (const [key, figure] of Object.entries(bench.figures)) {
      const budget = budgetFor(key);
      if (!budget) continue;
      judged.add(budget);
      const value = figure.value ?? NaN;
      const shown = `${key} = ${Number.isFinite(value) ? round(value) : 'NaN'} ${budget.unit}`;
      if (!Number.isFinite(value)) {
        failures.push(`${shown}: not measured${bench.notes.length ? ` (${bench.notes.join('; ')})` : ''}`);
        continue;
      }
      if (!withinBudget(value, budget)) {
        failures.push(`${shown}: over budget (${budget.direction === 'lower' ? '≤' : '≥'} ${budget.budget} ${budget.unit})`);
        continue;
      }
      const base = baseline?.figures[key];
      if (base !== undefined && regressed(value, base, budget)) {
        failures.push(`${shown}: more than 20% worse than the baseline ${round(base)} ${budget.unit}`);
        continue;
      }
      passes.push(`${shown} (budget ${budget.direction === 'lower' ? '≤' : '≥'} ${budget.budget}${base !== undefined ? `, baseline ${round(base)}` : ''})`);
    }
    for (const budget of budgets) {
      if (!judged.has(budget)) failures.push(`${budget.figure}: not reported by the ${name} benchmark`);
    }
  }
  return { failures, passes };
}

function round(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3);
}

/** The measured, finite figures of `results` as a baseline (non-smoke benchmarks only). */
export function baselineFrom(results: Results, previous: Baseline | null): Baseline {
  const figures: Record<string, number> = { ...(previous?.figures ?? {}) };
  for (const bench of Object.values(results.benchmarks)) {
    if (bench.status !== 'ok' || bench.smoke) continue;
    for (const [key, f] of Object.entries(bench.figures)) if (f.value !== null && Number.isFinite(f.value)) figures[key] = Number(f.value.toPrecision(4));
  }
  return { date: results.date, machine: results.machine, node: results.node, figures };
}

function main(argv: readonly string[]): number {
  const update = argv.includes('--update-baseline');
  const names = argv.filter((a) => !a.startsWith('--'));
  const unknown = names.filter((n) => !(BENCHMARKS as readonly string[]).includes(n));
  if (unknown.length) {
    console.error(`bench:check: unknown benchmark ${unknown.join(', ')} (known: ${BENCHMARKS.join(', ')})`);
    return 2;
  }
  const resultsFile = resolve(HERE, 'results.json');
  const results = readResults(resultsFile);
  if (!results) {
    console.error(`bench:check: ${resultsFile} is missing or not valid JSON: run npm run bench first`);
    return 1;
  }
  const baseline = readResults(BASELINE_FILE) as unknown as Baseline | null;
  if (update) {
    const next = baselineFrom(results, baseline);
    writeFileSync(BASELINE_FILE, JSON.stringify(next, null, 2) + '\n');
    console.log(`bench:check: wrote ${Object.keys(next.figures).length} figures to ${BASELINE_FILE}`);
    return 0;
  }
  const { failures, passes } = checkResults(results, baseline, names.length ? names : BENCHMARKS);
  for (const p of passes) console.log(`✓ ${p}`);
  for (const f of failures) console.log(`✗ ${f}`);
  if (baseline && baseline.machine.cpu !== results.machine.cpu) {
    console.log(`note: the baseline was measured on ${baseline.machine.cpu}, these results on ${results.machine.cpu}`);
  }
  console.log(failures.length ? `bench:check: ${failures.length} problem(s)` : 'bench:check: every figure within budget and baseline');
  return failures.length ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
