// The performance table (markdown) of docs/performance.md, from test/bench/results.json.
// Usage: node scripts/perf-table.mjs [--all] [--write[=<page>]] [results.json]
//   --all    also list the figures that have no budget (spreads, components).
//   --write  replace the table between the `<!-- perf-table:start -->` and
//            `<!-- perf-table:end -->` lines of <page> (default docs/performance.md) instead
//            of printing it; exit 1 when the page has no such markers.
import { readFileSync, writeFileSync } from 'node:fs';

const args = process.argv.slice(2);
const all = args.includes('--all');
const writeArg = args.find((a) => a === '--write' || a.startsWith('--write='));
const page = writeArg === undefined ? null : writeArg.includes('=') ? writeArg.slice('--write='.length) : 'docs/performance.md';
const file = args.find((a) => !a.startsWith('--')) ?? 'test/bench/results.json';

let results;
try {
  results = JSON.parse(readFileSync(file, 'utf8'));
} catch (error) {
  console.error(`perf-table: cannot read ${file}: ${error.message} (run npm run bench first)`);
  process.exit(1);
}

const ORDER = ['startup', 'idle', 'stream', 'long-session', 'loop', 'append', 'resume', 'rules'];
const names = [...ORDER.filter((n) => n in results.benchmarks), ...Object.keys(results.benchmarks).filter((n) => !ORDER.includes(n))];

function num(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return 'n/a';
  const a = Math.abs(v);
  const s = a >= 1000 ? Math.round(v).toLocaleString('en-US') : a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toPrecision(2);
  return s;
}
const withUnit = (v, unit) => (v === null || v === undefined || !Number.isFinite(v) ? 'n/a' : unit === '×' ? `${num(v)}×` : unit ? `${num(v)} ${unit}` : num(v));
const cell = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');

const rows = [];
for (const name of names) {
  const bench = results.benchmarks[name];
  if (bench.status === 'not-implemented') {
    rows.push([name, '—', 'not yet implemented', '', '']);
    continue;
  }
  if (bench.status === 'error') {
    rows.push([name, '—', 'benchmark failed', '', '✗']);
    continue;
  }
  const figures = Object.entries(bench.figures).filter(([, f]) => all || f.budget !== undefined);
  for (const [key, f] of figures) {
    const exact = f.budget === undefined ? '' : f.budget.toLocaleString('en-US');
    const budget = f.budget === undefined ? '' : `${f.direction === 'lower' ? '≤' : '≥'} ${f.unit === '×' ? `${exact}×` : `${exact} ${f.unit ?? ''}`.trim()}`;
    const status = bench.smoke ? 'smoke' : f.pass === null ? '' : f.pass ? '✓' : '✗';
    const short = key.slice(key.indexOf('.') + 1);
    // A label several figures share (a `*` budget) names the figure too.
    const shared = f.label !== undefined && figures.filter(([, g]) => g.label === f.label).length > 1;
    const what = f.label ? (shared ? `${f.label}: ${short}` : f.label) : short;
    rows.push([name, cell(what), withUnit(f.value, f.unit), budget, status]);
  }
  if (figures.some(([, f]) => f.value === null) && bench.notes.length) rows.push(['', cell(`note: ${bench.notes.join('; ')}`), '', '', '']);
}

const m = results.machine;
const date = results.date.slice(0, 10);
const out = [
  '| Benchmark | What | Measured | Budget | |',
  '|---|---|---:|---:|:-:|',
  ...rows.map((r) => `| ${r.join(' | ')} |`),
  '',
  `Measured on ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB RAM, ${m.os}, Node ${results.node}, ${date} (\`npm run bench\`; medians).`,
];
if (page === null) {
  console.log(out.join('\n'));
} else {
  const START = '<!-- perf-table:start -->';
  const END = '<!-- perf-table:end -->';
  let text;
  try {
    text = readFileSync(page, 'utf8');
  } catch (error) {
    console.error(`perf-table: cannot read ${page}: ${error.message}`);
    process.exit(1);
  }
  const from = text.indexOf(START);
  const to = text.indexOf(END);
  if (from < 0 || to < from) {
    console.error(`perf-table: ${page} has no ${START} … ${END} block to replace`);
    process.exit(1);
  }
  writeFileSync(page, `${text.slice(0, from)}${START}\n${out.join('\n')}\n${text.slice(to)}`);
  console.log(`perf-table: wrote the table into ${page}`);
}
