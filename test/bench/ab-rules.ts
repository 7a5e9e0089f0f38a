/**
 * Rules A/B (a helper for docs/rules.md#performance, not a benchmark): the rule engine of a git
 * revision against the working tree's, both loaded in one process, measured on the rules bench's
 * new shell lines (rules.ts: the same rules, calls, workspace and unseen pass numbers) in
 * alternating blocks (A B, then B A), so both see the same machine: on a loaded machine the
 * speed moves by up to twice between stretches of a run, which separate runs cannot tell from a
 * change. Prints each side's median µs per line and process CPU per line, and the median over
 * rounds of the B/A ratio of the round's medians with its quartiles (the comparison to read).
 * Each side is bundled by esbuild without keepNames (the shipped bundle's form).
 * Usage: npx tsx test/bench/ab-rules.ts <git revision> [rounds] [passes per block]
 * `MIX=all` measures the bench's whole call mix instead of its shell lines.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { build } from 'esbuild';
import { stringify } from 'yaml';
import type { RuleQuery } from '../../src/authz/rules/evaluate';
import { CALLS, MORE_SHELL_CALLS, generatedRules, makeWorkspace, unseen } from './rules';
import { stats } from './harness';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [revision, roundsArg, blockArg] = process.argv.slice(2);
if (!revision) throw new Error('usage: npx tsx test/bench/ab-rules.ts <git revision> [rounds] [passes per block]');
const rounds = Number(roundsArg ?? 100);
const block = Number(blockArg ?? 100);

interface Engine {
  parseRuleSources: typeof import('../../src/authz/rules/load').parseRuleSources;
  evaluateRules: typeof import('../../src/authz/rules/evaluate').evaluateRules;
  workspaceRealPath: typeof import('../../src/authz/authorizer').workspaceRealPath;
}

/** The engine of the tree at `root` (its src/), bundled into `out` and loaded. */
async function engineAt(root: string, out: string): Promise<Engine> {
  await build({
    stdin: {
      contents: ["export { parseRuleSources } from './src/authz/rules/load';", "export { evaluateRules } from './src/authz/rules/evaluate';", "export { workspaceRealPath } from './src/authz/authorizer';"].join('\n'),
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: out,
    logLevel: 'warning',
    banner: { js: "import { createRequire as __createRequire } from 'module'; const require = __createRequire(import.meta.url);" },
  });
  return (await import(pathToFileURL(out).href)) as Engine;
}

const dir = mkdtempSync(join(tmpdir(), 'legion-ab-rules-'));
const passesInWorkspace = 6000;
const workspace = makeWorkspace(passesInWorkspace);
try {
  const tree = join(dir, 'a');
  mkdirSync(tree);
  execFileSync('sh', ['-c', `git archive ${JSON.stringify(revision)} src | tar -x -C ${JSON.stringify(tree)}`], { cwd: ROOT });
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
  const engines = [await engineAt(tree, join(dir, 'a.mjs')), await engineAt(ROOT, join(dir, 'b.mjs'))];
  const shipped = readFileSync(join(ROOT, 'config', 'rules.yaml'), 'utf8');
  const extra = stringify({ version: 1, rules: generatedRules(500 - (shipped.match(/^\s+- id: /gm) ?? []).length) });
  const sides = engines.map((engine) => {
    const loaded = engine.parseRuleSources([{ file: 'config/rules.yaml', text: shipped }, { file: '.legion/rules.yaml', text: extra }]);
    if (!loaded.ok) throw new Error(loaded.error);
    const realPath = engine.workspaceRealPath(workspace);
    const calls = CALLS.map((c) => ({ ...c, workspaceRoot: workspace, realPath }));
    const mix: RuleQuery[] = process.env.MIX === 'all' ? calls : [...calls.filter((c) => c.toolName === 'shell'), ...MORE_SHELL_CALLS.map((c) => ({ ...c, workspaceRoot: workspace, realPath }))];
    return { engine, ruleSet: loaded.ruleSet, mix, samples: [] as number[], cpu: 0 };
  });
  const decisions = sides.map((s) => s.mix.map((c) => s.engine.evaluateRules(s.ruleSet, unseen(c, -1)).decision).join(' '));
  if (decisions[0] !== decisions[1]) console.log(`the two decide differently: A ${decisions[0]} | B ${decisions[1]}`);
  let sink = 0;
  const runBlock = (side: (typeof sides)[number], from: number, timed: boolean): void => {
    const passes: RuleQuery[][] = [];
    for (let i = from; i < from + block; i++) passes.push(side.mix.map((c) => unseen(c, i % passesInWorkspace)));
    const cpu = process.cpuUsage();
    for (const pass of passes) {
      const start = performance.now();
      for (const call of pass) sink += side.engine.evaluateRules(side.ruleSet, call).reason.length;
      if (timed) side.samples.push(((performance.now() - start) * 1000) / pass.length);
    }
    const used = process.cpuUsage(cpu);
    if (timed) side.cpu += used.user + used.system;
  };
  for (let r = 0; r < 10; r++) for (const side of sides) runBlock(side, r * block, false); // warm-up
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const from = (1000 + r * block) % passesInWorkspace;
    const before = sides.map((s) => s.samples.length);
    for (const side of r % 2 ? [...sides].reverse() : sides) runBlock(side, from, true);
    ratios.push(stats(sides[1]!.samples.slice(before[1])).median / stats(sides[0]!.samples.slice(before[0])).median);
  }
  if (sink === 0) throw new Error('unreachable: keeps the loop from being optimized away');
  const lines = rounds * block * sides[0]!.mix.length;
  const side = (name: string, s: (typeof sides)[number]) => `${name} median ${stats(s.samples).median.toFixed(2)} µs, CPU ${(s.cpu / lines).toFixed(2)} µs per line`;
  const r = stats(ratios);
  const sorted = [...ratios].sort((a, b) => a - b);
  console.log(`${side(`A (${revision})`, sides[0]!)} | ${side('B (working tree)', sides[1]!)}`);
  console.log(`B/A per round: median ${r.median.toFixed(3)} (quartiles ${sorted[sorted.length >> 2]!.toFixed(3)}–${sorted[(3 * sorted.length) >> 2]!.toFixed(3)}, ${rounds} rounds of ${block} passes)`);
} finally {
  rmSync(workspace, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
}
