/**
 * rules: the cost of one authorization decision by the rule engine with 500 rules loaded
 * (issue 5: ≤ 10 µs median). The rule set is the shipped config/rules.yaml plus generated
 * rules spread over every tool the way real layers look (path globs, command regexes and
 * globs, participant scopes, tool globs such as `mcp__*` and `file_*`). The calls are a mix
 * of file reads/writes, searches, messages and shell commands (a third of them compound,
 * so the shell splitter runs). Each sample times one pass over the call mix; the figure is
 * the median over samples divided by the calls per pass.
 * Shell decisions include the plain-words parse and, for the read-only commands, the path
 * checks with real symlink resolution (`workspaceRealPath` over a temp workspace that holds
 * the files named, as in production); the shell mix adds a line that is not plain words.
 * Figures: perDecisionMicros and perShellDecisionMicros (issue 28: ≤ 10 µs, parse included)
 * are the budgets, each pass's calls new (see `unseen`); repeatPerDecisionMicros and
 * repeatPerShellDecisionMicros the same calls every pass (the engine's memos answer most of
 * them); loadMs (parse + compile).
 */
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { stringify } from 'yaml';
import { parseRuleSources } from '../../src/authz/rules/load';
import { evaluateRules, type RuleQuery } from '../../src/authz/rules/evaluate';
import { workspaceRealPath } from '../../src/authz/authorizer';
import { gc, stats, type BenchOptions } from './harness';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function generatedRules(count: number): Record<string, unknown>[] {
  const rules: Record<string, unknown>[] = [];
  const dirs = ['src', 'docs', 'test', 'scripts', 'config', 'packages/app', 'packages/lib', 'vendor', 'build', 'tmp'];
  const programs = ['npm', 'pnpm', 'yarn', 'make', 'cargo', 'go', 'python', 'pytest', 'docker', 'kubectl', 'terraform', 'node', 'tsc', 'eslint', 'prettier'];
  const decisions = ['allow', 'ask', 'deny'] as const;
  for (let i = 0; rules.length < count; i++) {
    const decision = decisions[i % 3]!;
    const dir = dirs[i % dirs.length]!;
    const program = programs[i % programs.length]!;
    const id = `gen-${i}`;
    switch (i % 10) {
      case 0: case 1:
        rules.push({ id, decision, tool: 'file_read|file_write|file_edit', match: { path: [`${dir}/**/*.${['ts', 'md', 'json'][i % 3]}`, `**/${dir}-${i}/**`] } });
        break;
      case 2:
        rules.push({ id, decision, tool: 'file_write|file_delete', participants: [`agent-${i % 7}`, 'qa-*'], match: { path: `${dir}/gen-${i}/**` } });
        break;
      case 3:
        rules.push({ id, decision, tool: 'shell', match: { command: { regex: `${program} (run |exec )?task-${i}( [\\w./-]+)*` } } });
        break;
      case 4:
        rules.push({ id, decision, tool: 'shell', match: { command: `${program} gen-${i} *` } });
        break;
      case 5:
        rules.push({ id, decision, tool: 'grep|glob', match: { path: `${dir}/**`, ...(i % 20 === 5 ? { pattern: `*gen${i}*` } : {}) } });
        break;
      case 6:
        rules.push({ id, decision, tool: 'communicator', match: { targetId: `helper-${i}`, sessionName: ['docs', `s-${i}-*`] } });
        break;
      case 7:
        rules.push({ id, decision, tool: `mcp__server${i % 9}__*` });
        break;
      case 8:
        rules.push({ id, decision, tool: 'file_*', participants: [`team-${i}-*`] });
        break;
      default:
        rules.push({ id, decision, tool: 'spawn_agent|modify_agent', match: { id: `gen-${i}-*` } });
    }
  }
  return rules;
}

export const CALLS: readonly Omit<RuleQuery, 'workspaceRoot'>[] = [
  { toolName: 'file_read', input: { path: 'src/authz/rules/evaluate.ts' }, participantId: 'agent-1' },
  { toolName: 'file_read', input: { path: 'docs/../.env' }, participantId: 'agent-2' },
  { toolName: 'file_write', input: { path: 'docs/guide/intro.md', content: 'x' }, participantId: 'agent-3' },
  { toolName: 'file_edit', input: { path: './packages/app/src/main.ts', oldString: 'a', newString: 'b' }, participantId: 'qa-1' },
  { toolName: 'grep', input: { pattern: 'TODO', path: 'src' }, participantId: 'agent-1' },
  { toolName: 'glob', input: { pattern: '**/*.test.ts' }, participantId: 'agent-4' },
  { toolName: 'communicator', input: { targetId: 'scribe', message: 'Please document the rules.', sessionName: 'docs' }, participantId: 'ur-agent' },
  { toolName: 'mcp__server3__search', input: { q: 'x' }, participantId: 'agent-5' },
  { toolName: 'shell', input: { command: 'git status' }, participantId: 'agent-1' },
  { toolName: 'shell', input: { command: 'npm test -- --run src/authz' }, participantId: 'agent-2' },
  { toolName: 'shell', input: { command: 'git diff HEAD~1 -- src && npm run lint' }, participantId: 'agent-3' },
  { toolName: 'shell', input: { command: 'cat package.json | head -20; ls -la src' }, participantId: 'agent-1' },
];

/** Shell calls measured besides those of CALLS (for perShellDecisionMicros only, so perDecisionMicros keeps its mix). */
export const MORE_SHELL_CALLS: readonly Omit<RuleQuery, 'workspaceRoot'>[] = [
  { toolName: 'shell', input: { command: 'git log --oneline -5 -- src/main.ts 2>/dev/null' }, participantId: 'agent-2' },
  { toolName: 'shell', input: { command: 'echo ${x:-<(touch PWNED)}' }, participantId: 'agent-3' },
];

/**
 * The call with text no earlier call had (a pass number in its path, command, pattern or
 * message), so that no memo of the engine answers it: the judged figures are decisions on
 * calls never seen before. The same calls repeated (an agent's `git status` again) are the
 * `repeat…` figures. The word added to a command (`v<pass>`) names a file the workspace
 * holds (makeWorkspace), as an agent's new lines mostly name existing files: the line's text,
 * parse and rules are the same as with a missing name, but its `lstat` is of an existing
 * path, not of a name never looked up (which costs the kernel a new negative directory entry,
 * about 1.3 µs more here, though no gain showed in the figure: docs/rules.md#performance).
 */
export function unseen(call: RuleQuery, pass: number): RuleQuery {
  const input = { ...(call.input as Record<string, unknown>) };
  for (const field of ['path', 'pattern', 'message', 'q'] as const) {
    if (typeof input[field] === 'string') input[field] = `${input[field] as string}.v${pass}`;
  }
  if (typeof input.command === 'string') input.command = `${input.command} v${pass}`;
  // Through JSON, as a model's tool call arrives: the strings built above are V8 cons strings,
  // which the engine would flatten inside the timed window; a parsed call's are flat already.
  return { ...call, input: JSON.parse(JSON.stringify(input)) as Record<string, unknown> };
}

/**
 * A workspace holding the files the calls name (the unseen commands' `v<pass>` for each of
 * `passes`), so symlink resolution does real work, and a `.git` of its own, as a project's
 * workspace has: without it every git command is refused after one lookup (git would read a
 * repository above the workspace) and the figure would leave out the path checks of the git
 * commands, most of the mix's read-only commands.
 */
export function makeWorkspace(passes: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'legion-bench-rules-'));
  mkdirSync(join(dir, '.git'));
  for (let pass = -1; pass < passes; pass++) writeFileSync(join(dir, `v${pass}`), '');
  // Their creation committed now, not written back while the passes are timed (ext4: that cost
  // the shell figure some 6 µs per decision, loaded; docs/rules.md#performance).
  const fd = openSync(dir, 'r');
  fsyncSync(fd);
  closeSync(fd);
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'package.json'), '{}');
  writeFileSync(join(dir, 'src', 'main.ts'), '');
  return dir;
}

export async function run({ smoke, note }: BenchOptions): Promise<Record<string, number>> {
  const shipped = readFileSync(join(ROOT, 'config', 'rules.yaml'), 'utf8');
  const shippedCount = (shipped.match(/^\s+- id: /gm) ?? []).length;
  const extra = stringify({ version: 1, rules: generatedRules(500 - shippedCount) });
  const t0 = performance.now();
  const loaded = parseRuleSources([{ file: 'config/rules.yaml', text: shipped }, { file: '.legion/rules.yaml', text: extra }]);
  const loadMs = performance.now() - t0;
  if (!loaded.ok) throw new Error(loaded.error);
  const ruleSet = loaded.ruleSet;
  if (ruleSet.rules.length !== 500) throw new Error(`expected 500 rules, got ${ruleSet.rules.length}`);
  const passes = smoke ? 50 : 5_000;
  const warmup = smoke ? 10 : 1_000;
  const workspace = makeWorkspace(warmup + passes);
  const realPath = workspaceRealPath(workspace);
  const calls = CALLS.map((c) => ({ ...c, workspaceRoot: workspace, realPath }));
  const shellCalls = [...calls.filter((c) => c.toolName === 'shell'), ...MORE_SHELL_CALLS.map((c) => ({ ...c, workspaceRoot: workspace, realPath }))];

  /**
   * The median over passes of one pass's wall time per call. `label` (the judged figures) adds
   * a note: the median of each tenth of the timed passes, in order, and the process's CPU time
   * (all threads, GC included) per call over the timed passes, so a run whose figure is off
   * shows whether a stretch of it ran slower and whether the CPU did more work or the process
   * waited (docs/rules.md#performance: the spread of the shell figure).
   */
  const measure = (batch: readonly RuleQuery[], passes: number, warmup: number, fresh: boolean, label?: string): number => {
    const samples: number[] = [];
    let sink = 0;
    let cpu: NodeJS.CpuUsage | null = null;
    let wall = 0;
    for (let i = 0; i < warmup + passes; i++) {
      if (i === warmup) {
        cpu = process.cpuUsage();
        wall = performance.now();
      }
      const pass = fresh ? batch.map((call) => unseen(call, i)) : batch;
      const start = performance.now();
      for (const call of pass) sink += evaluateRules(ruleSet, call).reason.length;
      const micros = ((performance.now() - start) * 1000) / batch.length;
      if (i >= warmup) samples.push(micros);
    }
    if (sink === 0) throw new Error('unreachable: keeps the loop from being optimized away');
    if (label && note && cpu) {
      const used = process.cpuUsage(cpu);
      const calls = passes * batch.length;
      const tenth = Math.max(1, Math.floor(samples.length / 10));
      const stretches: string[] = [];
      for (let k = 0; k + tenth <= samples.length; k += tenth) stretches.push(stats(samples.slice(k, k + tenth)).median.toFixed(1));
      note(
        `${label}: median µs per call by tenth of the timed passes ${stretches.join(' ')}; ` +
          `over them, wall ${(((performance.now() - wall) * 1000) / calls).toFixed(1)} µs and process CPU ${((used.user + used.system) / calls).toFixed(1)} µs per call (bench's own work and GC included)`,
      );
    }
    return stats(samples).median;
  };
  gc();
  try {
    for (const start of ['cat package.json', 'git log', 'git status']) {
      const call = shellCalls.find((c) => String((c.input as { command?: string }).command).startsWith(start))!;
      if (evaluateRules(ruleSet, unseen(call, -1)).decision !== 'allow') {
        throw new Error(`the read-only shell call \`${start} …\` is not allowed: the bench would not measure its path checks`);
      }
    }
    return {
      perDecisionMicros: measure(calls, passes, warmup, true, 'perDecisionMicros'),
      perShellDecisionMicros: measure(shellCalls, passes, warmup, true, 'perShellDecisionMicros'),
      repeatPerDecisionMicros: measure(calls, passes, warmup, false),
      repeatPerShellDecisionMicros: measure(shellCalls, passes, warmup, false),
      loadMs,
    };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}
