/**
 * `npm run bench [-- <name>...] [-- --smoke]`: run benchmark modules and write results.json.
 *
 * Each benchmark runs in its own Node process (fresh heap, --expose-gc) so one cannot
 * skew another's memory or JIT state. A module that does not exist yet is reported as
 * "not yet implemented". Exit code: 1 when a benchmark throws (or an unknown name is
 * given: 2); budget misses are reported here and enforced by `npm run bench:check`.
 * Smoke mode runs tiny sizes only to prove the harness works; it does not judge budgets
 * and writes its results to a temp file, not results.json.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BENCHMARKS, budgetFor, figurePrefix, unitOf, withinBudget } from './budgets';
import type { BenchModule } from './harness';
import { makeTestHome, stampPlaces, superviseRun, verdictOnPlaces, watchedPlaces } from '../../scripts/test-home.mjs';
import { machine, readResults, type BenchResult, type FigureResult, type Results } from './results';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
export const RESULTS_FILE = join(HERE, 'results.json');

interface Args { smoke: boolean; names: string[]; child: string | null; resultFile: string | null; out: string | null }

function parse(argv: readonly string[]): Args {
  const args: Args = { smoke: false, names: [], child: null, resultFile: null, out: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--smoke') args.smoke = true;
    else if (a === '--child') args.child = argv[++i] ?? null;
    else if (a === '--result') args.resultFile = argv[++i] ?? null;
    else if (a === '--out') args.out = argv[++i] ?? null;
    else if (a.startsWith('-')) throw new Error(`unknown flag ${a} (flags: --smoke, --out <file>)`);
    else args.names.push(a);
  }
  return args;
}

/** Child mode: run one module, write { figures, notes } (NaN → null) to the result file. */
async function runChild(name: string, smoke: boolean, resultFile: string): Promise<number> {
  const notes: string[] = [];
  try {
    const mod = (await import(pathToFileURL(join(HERE, `${name}.ts`)).href)) as Partial<BenchModule>;
    if (typeof mod.run !== 'function') throw new Error(`test/bench/${name}.ts does not export run()`);
    const figures = await mod.run({ smoke, note: (t) => void notes.push(t) });
    const clean: Record<string, number | null> = {};
    for (const [k, v] of Object.entries(figures)) {
      if (typeof v !== 'number') throw new Error(`figure ${k} is not a number: ${JSON.stringify(v)}`);
      clean[k] = Number.isFinite(v) ? v : null;
    }
    writeFileSync(resultFile, JSON.stringify({ figures: clean, notes }));
    return 0;
  } catch (error) {
    writeFileSync(resultFile, JSON.stringify({ error: error instanceof Error ? error.stack ?? error.message : String(error), notes }));
    return 1;
  }
}

function judge(name: string, raw: Record<string, number | null>, smoke: boolean): Record<string, FigureResult> {
  const out: Record<string, FigureResult> = {};
  const prefix = figurePrefix(name);
  for (const [k, value] of Object.entries(raw)) {
    const key = `${prefix}.${k}`;
    const b = budgetFor(key);
    out[key] = b
      ? { value, unit: b.unit, budget: b.budget, direction: b.direction, label: b.label, pass: smoke ? null : withinBudget(value ?? NaN, b) }
      : { value, unit: unitOf(key), pass: null };
  }
  return out;
}

type Run = (command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number }) => Promise<number>;

async function runOne(name: string, smoke: boolean, env: NodeJS.ProcessEnv, run: Run): Promise<BenchResult> {
  const date = new Date().toISOString();
  if (!existsSync(join(HERE, `${name}.ts`))) {
    return { status: 'not-implemented', date, smoke, notes: ['not yet implemented'], figures: {} };
  }
  const dir = mkdtempSync(join(env.TMPDIR ?? tmpdir(), 'legion-bench-'));
  const resultFile = join(dir, 'result.json');
  const t0 = performance.now();
  try {
    const status = await run(
      process.execPath,
      ['--import', 'tsx', '--expose-gc', join(HERE, 'run.ts'), '--child', name, '--result', resultFile, ...(smoke ? ['--smoke'] : [])],
      { cwd: ROOT, timeout: smoke ? 60_000 : 20 * 60_000, env: { ...env, LEGION_BENCH: '1' } },
    );
    const durationMs = Math.round(performance.now() - t0);
    let parsed: { figures?: Record<string, number | null>; notes?: string[]; error?: string } = {};
    try {
      parsed = JSON.parse(readFileSync(resultFile, 'utf8'));
    } catch {
      parsed = { error: `the benchmark process exited (${status}) without a result` };
    }
    if (parsed.error) return { status: 'error', date, smoke, durationMs, error: parsed.error, notes: parsed.notes ?? [], figures: {} };
    return { status: 'ok', date, smoke, durationMs, notes: parsed.notes ?? [], figures: judge(name, parsed.figures ?? {}, smoke) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function fmt(v: number | null): string {
  if (v === null) return 'NaN';
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3);
}

function report(name: string, r: BenchResult): void {
  if (r.status === 'not-implemented') return void console.log(`- ${name}: not yet implemented`);
  if (r.status === 'error') return void console.log(`✗ ${name}: ERROR\n${r.error}`);
  console.log(`${name} (${((r.durationMs ?? 0) / 1000).toFixed(1)} s)`);
  for (const [key, f] of Object.entries(r.figures)) {
    const mark = f.pass === null ? ' ' : f.pass ? '✓' : '✗';
    const budget = f.budget === undefined ? '' : `  (budget ${f.direction === 'lower' ? '≤' : '≥'} ${f.budget}${f.unit ? ' ' + f.unit : ''})`;
    console.log(`  ${mark} ${key} = ${fmt(f.value)}${f.unit ? ' ' + f.unit : ''}${budget}`);
  }
  for (const n of r.notes) console.log(`    note: ${n}`);
}

async function mainRun(argv: readonly string[]): Promise<number> {
  let args: Args;
  try {
    args = parse(argv);
  } catch (error) {
    console.error(`bench: ${(error as Error).message}`);
    return 2;
  }
  if (args.child) return runChild(args.child, args.smoke, args.resultFile ?? join(tmpdir(), 'legion-bench-result.json'));
  const unknown = args.names.filter((n) => !(BENCHMARKS as readonly string[]).includes(n));
  if (unknown.length) {
    console.error(`bench: unknown benchmark ${unknown.join(', ')} (known: ${BENCHMARKS.join(', ')})`);
    return 2;
  }
  const names = args.names.length ? args.names : [...BENCHMARKS];
  const out = args.out ? resolve(args.out) : args.smoke ? join(tmpdir(), 'legion-bench-smoke.json') : RESULTS_FILE;
  console.log(`bench${args.smoke ? ' (smoke: tiny sizes, budgets not judged)' : ''}: ${names.join(', ')}`);
  const t0 = performance.now();
  const fresh: Record<string, BenchResult> = {};
  // The benchmarks run in a home of their own, as the tests do (scripts/test-home.mjs): the
  // workspaces they trust and the caches they write stay out of the user's folders, and every
  // run starts from the same empty registry.
  const places = watchedPlaces(process.env);
  const before = stampPlaces(places);
  // An interrupt reaches the benchmark, and the home is removed (LEGION_TEST_KEEP_HOME=1 keeps it).
  const home = makeTestHome(process.env);
  const supervisor = superviseRun(home);
  try {
    for (const name of names) {
      fresh[name] = await runOne(name, args.smoke, home.env, supervisor.run);
      report(name, fresh[name]);
    }
  } finally {
    supervisor.finish();
  }
  const verdict = verdictOnPlaces(before, places, home);
  if (verdict.lines.length > 0) console.log(`\n${verdict.lines.join('\n')}`);
  // A partial run updates its benchmarks and keeps the others' last results.
  const previous = !args.smoke && args.names.length ? readResults(out) : null;
  const results: Results = {
    version: 1,
    date: new Date().toISOString(),
    machine: machine(),
    node: process.version,
    benchmarks: { ...(previous?.benchmarks ?? {}), ...fresh },
  };
  writeFileSync(out, JSON.stringify(results, null, 2) + '\n');
  const errors = Object.entries(fresh).filter(([, r]) => r.status === 'error').map(([n]) => n);
  const over = Object.values(fresh).flatMap((r) => Object.entries(r.figures)).filter(([, f]) => f.pass === false).map(([k]) => k);
  console.log(`\nwrote ${out} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  if (over.length) console.log(`over budget: ${over.join(', ')} (npm run bench:check fails on these)`);
  if (errors.length) console.log(`failed: ${errors.join(', ')}`);
  return errors.length || verdict.fail ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await mainRun(process.argv.slice(2));
}
