/**
 * The benchmarks the harness knows, and the budget of each figure (issue 8).
 * A benchmark is a module `test/bench/<name>.ts` exporting `run(opts): Promise<Record<string, number>>`;
 * its figures are reported as `<prefix>.<key>` where prefix is the camelCase name
 * (`long-session` → `longSession`). A figure without a budget here is reported, not judged.
 */

/** `lower`: the figure must be ≤ budget (times, memory); `higher`: ≥ budget (throughput). */
export type Direction = 'lower' | 'higher';

export interface Budget {
  /** Figure key, or a pattern with `*` (e.g. `longSession.*P95Ms`). */
  readonly figure: string;
  readonly budget: number;
  readonly direction: Direction;
  readonly unit: string;
  /** What it measures, for the table in docs/performance.md. */
  readonly label: string;
  /**
   * Absolute tolerance for the baseline comparison: a figure regresses only when it is
   * more than 20% AND more than `slack` worse than its baseline (tiny figures are noisy).
   */
  readonly slack?: number;
}

/** Every benchmark, in run order. Modules that do not exist yet are reported as not implemented. */
export const BENCHMARKS = ['startup', 'idle', 'stream', 'stream-sdk', 'long-session', 'loop', 'append', 'resume', 'rules', 'sandbox', 'checkpoints', 'redact', 'context', 'mcp', 'serve', 'remote', 'workflows', 'engine', 'worktrees', 'day'] as const;
export type BenchmarkName = (typeof BENCHMARKS)[number];

export const BUDGETS: readonly Budget[] = [
  { figure: 'startup.firstFrameMs', budget: 200, direction: 'lower', unit: 'ms', label: 'built CLI to first full frame (tmux)', slack: 15 },
  { figure: 'startup.firstFrameNetMs', budget: 60, direction: 'lower', unit: 'ms', label: 'first full frame net of a bare `node -e` started alternately in the same pane', slack: 10 },
  { figure: 'idle.cpuMs5s', budget: 20, direction: 'lower', unit: 'ms', label: 'CPU time over 5 s idle', slack: 5 },
  { figure: 'stream.cpuPerDeltaMs', budget: 0.35, direction: 'lower', unit: 'ms', label: 'CPU per delta, 4 lanes × 1,000 deltas', slack: 0.02 },
  { figure: 'stream.keyToFrameP95Ms', budget: 16, direction: 'lower', unit: 'ms', label: 'keystroke to frame p95 while streaming', slack: 2 },
  { figure: 'streamSdk.headlessCpuPerDeltaMs', budget: 0.12, direction: 'lower', unit: 'ms', label: 'CPU per delta, `legion run` over the Anthropic SDK (6,000 deltas, 1 ms apart)', slack: 0.02 },
  { figure: 'streamSdk.tui1CpuPerDeltaMs', budget: 0.15, direction: 'lower', unit: 'ms', label: 'CPU per delta, TUI with 1 lane streaming over the Anthropic SDK (3,000 − 300 deltas, after a warm-up pass)', slack: 0.02 },
  { figure: 'streamSdk.tui4CpuPerDeltaMs', budget: 0.3, direction: 'lower', unit: 'ms', label: 'CPU per delta, TUI with 4 lanes streaming over the Anthropic SDK', slack: 0.03 },
  { figure: 'stream.lostKeystrokes', budget: 0, direction: 'lower', unit: 'keys', label: 'keystrokes that never got a frame' },
  { figure: 'longSession.rssMb100k', budget: 150, direction: 'lower', unit: 'MB', label: 'RSS with 100,000 messages', slack: 10 },
  { figure: 'longSession.*P95Ms', budget: 16, direction: 'lower', unit: 'ms', label: 'action p95 in a 10,000-message session', slack: 2 },
  { figure: 'loop.turnsPerSecond', budget: 2000, direction: 'higher', unit: 'turns/s', label: 'faux-provider agent turns per second' },
  { figure: 'append.ratio10kTo10', budget: 1.5, direction: 'lower', unit: '×', label: 'append at 10,000 lines ÷ append at 10', slack: 0.1 },
  { figure: 'resume.readyMs', budget: 300, direction: 'lower', unit: 'ms', label: '20,000-message run ready', slack: 20 },
  { figure: 'resume.compactedReadyMs', budget: 300, direction: 'lower', unit: 'ms', label: '20,000-message run ready, each session compacted 20 times', slack: 20 },
  { figure: 'checkpoints.noChangeMs', budget: 5, direction: 'lower', unit: 'ms', label: 'checkpoint before a batch, 10,000 files, nothing changed', slack: 1 },
  { figure: 'checkpoints.fewChangedMs', budget: 50, direction: 'lower', unit: 'ms', label: 'checkpoint before a batch, 10,000 files, 5 changed', slack: 10 },
  { figure: 'worktrees.createMs', budget: 300, direction: 'lower', unit: 'ms', label: 'isolated session worktree, 10,000-file repository', slack: 30 },
  { figure: 'worktrees.merge20Ms', budget: 100, direction: 'lower', unit: 'ms', label: 'merge of 20 changed files into the workspace', slack: 10 },
  { figure: 'mcp.overheadMs', budget: 2, direction: 'lower', unit: 'ms', label: "Legion's share of an MCP tool call (server-everything echo, stdio)", slack: 0.5 },
  { figure: 'rules.perDecisionMicros', budget: 10, direction: 'lower', unit: 'µs', label: 'rule decision with 500 rules', slack: 0.5 },
  { figure: 'rules.perShellDecisionMicros', budget: 10, direction: 'lower', unit: 'µs', label: 'shell rule decision, plain-words parse and read-only path checks included', slack: 0.5 },
  { figure: 'sandbox.overheadMs', budget: 30, direction: 'lower', unit: 'ms', label: 'shell sandbox start-up per call (median)', slack: 5 },
  { figure: 'redact.worst1MbMs', budget: 50, direction: 'lower', unit: 'ms', label: 'redaction of a 1 MB adversarial tool input', slack: 5 },
  // Context management (docs/context.md): the 300-turn, 8 kB-per-turn session on a 32k window.
  { figure: 'context.overflows', budget: 0, direction: 'lower', unit: 'errors', label: '"prompt is too long" errors, 300 turns × 8 kB on a 32k window' },
  { figure: 'context.p95RequestShare', budget: 0.75, direction: 'lower', unit: '× window', label: 'p95 request size, 300-turn session', slack: 0.05 },
  { figure: 'context.inputRatio', budget: 0.15, direction: 'lower', unit: '×', label: 'input tokens sent ÷ whole history every call', slack: 0.01 },
  // `legion serve` (docs/serve.md): the socket path between the core and attached front ends.
  { figure: 'serve.latencyP95Ms', budget: 5, direction: 'lower', unit: 'ms', label: 'event latency server → attached client p95 (±1 ms: `at` resolution)', slack: 1 },
  { figure: 'serve.cpuRatio', budget: 1.3, direction: 'lower', unit: '×', label: 'CPU per streamed delta attached (server + client) ÷ in-process', slack: 0.1 },
  // Engine mode on Restate (docs/engine.md#performance).
  { figure: 'engine.overheadMs', budget: 15, direction: 'lower', unit: 'ms', label: 'engine mode: wall time per turn (2 model calls, 1 tool) over in-process', slack: 5 },
  { figure: 'engine.latencyP95Ms', budget: 50, direction: 'lower', unit: 'ms', label: 'engine mode: text delta from the model through worker and hub to an attached front end, p95', slack: 10 },
  { figure: 'engine.sessions20CpuRatio', budget: 1.5, direction: 'lower', unit: '×', label: 'engine mode: CPU per streamed delta, 20 sessions at once through one worker (hub + worker + restate-server) ÷ in-process', slack: 0.1 },
  { figure: 'engine.recoveryMs', budget: 2200, direction: 'lower', unit: 'ms', label: "engine mode: worker killed mid-stream → the turn's next event on another worker, worst of 5 (2 s + the 200 ms first retry)", slack: 200 },
  { figure: 'serve.clients20MaxBehindMs', budget: 100, direction: 'lower', unit: 'ms', label: '20 attached clients, 4 lanes streaming: the largest delay of any delta', slack: 20 },
  { figure: 'workflows.fanoutRatio', budget: 0.6, direction: 'lower', unit: '×', label: '8 parallel workflow steps + a join ÷ 9 steps in a chain (parallel steps overlap)', slack: 0.05 },
  { figure: 'remote.sseP95Ms', budget: 5, direction: 'lower', unit: 'ms', label: 'event from the bus to a web-page SSE client over loopback HTTP, p95', slack: 1 },
  // The working day (docs/performance.md#the-day-bench): 1,500 turns through `legion serve`, no restart.
  { figure: 'day.notDone', budget: 0, direction: 'lower', unit: 'turns', label: 'day: turns that did not end with their answer (1,500 turns, 12 sessions)' },
  { figure: 'day.overflows', budget: 0, direction: 'lower', unit: 'errors', label: 'day: "prompt is too long" refusals, 32k window' },
  { figure: 'day.maxRequestShare', budget: 1, direction: 'lower', unit: '× window', label: 'day: largest request', slack: 0.05 },
  { figure: 'day.p95RequestShare', budget: 0.75, direction: 'lower', unit: '× window', label: 'day: p95 request size', slack: 0.05 },
  { figure: 'day.rssGrowth', budget: 1.25, direction: 'lower', unit: '×', label: 'day: serve RSS at the end ÷ after 10% of turns (after a full GC)', slack: 0.05 },
  { figure: 'day.cpuPerTurnRatio', budget: 1.2, direction: 'lower', unit: '×', label: 'day: serve CPU per turn, trend through the steady tenths: last ÷ first', slack: 0.1 },
  { figure: 'day.legionGrowthRatio', budget: 1.25, direction: 'lower', unit: '×', label: 'day: .legion/ bytes per turn, second half ÷ first half', slack: 0.1 },
  { figure: 'day.messages', budget: 3000, direction: 'higher', unit: 'messages', label: "day: messages across the attached TUI's sessions" },
  { figure: 'day.keyToFrameP95Ms', budget: 16, direction: 'lower', unit: 'ms', label: 'day: attached TUI keystroke to frame p95 at the end', slack: 2 },
  { figure: 'day.serverIdleCpuMs5s', budget: 20, direction: 'lower', unit: 'ms', label: 'day: serve idle CPU over 5 s after the day', slack: 5 },
  { figure: 'day.tuiIdleCpuMs5s', budget: 20, direction: 'lower', unit: 'ms', label: 'day: attached tmux TUI idle CPU over 5 s after the day', slack: 5 },
  { figure: 'context.decideMicros10k', budget: 200, direction: 'lower', unit: 'µs', label: 'compaction decision per call, 10,000 messages', slack: 20 },
];

/** `long-session` → `longSession`. */
export function figurePrefix(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function matches(pattern: string, key: string): boolean {
  if (!pattern.includes('*')) return pattern === key;
  const re = new RegExp('^' + pattern.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$');
  return re.test(key);
}

/** The budget that judges a figure key (first match), if any. */
export function budgetFor(key: string): Budget | undefined {
  return BUDGETS.find((b) => matches(b.figure, key));
}

/** True when `value` meets `budget`. NaN never does. */
export function withinBudget(value: number, budget: Budget): boolean {
  if (!Number.isFinite(value)) return false;
  return budget.direction === 'lower' ? value <= budget.budget : value >= budget.budget;
}

/**
 * True when `value` is more than 20% (and more than `slack`) worse than `baseline`:
 * higher for `lower` figures, lower for `higher` figures.
 */
export function regressed(value: number, baseline: number, budget: Pick<Budget, 'direction' | 'slack'>): boolean {
  if (!Number.isFinite(value)) return true;
  const slack = budget.slack ?? 0;
  return budget.direction === 'lower'
    ? value > baseline * 1.2 && value - baseline > slack
    : value < baseline * 0.8 && baseline - value > slack;
}

/** A unit guessed from a figure's name, for figures without a budget (`at10kMicros` → µs). */
export function unitOf(key: string): string | undefined {
  if (/Micros\d*$/.test(key)) return 'µs';
  if (/Ms(\d+s)?$/.test(key)) return 'ms';
  if (/Mb(\d+k)?$/.test(key)) return 'MB';
  if (/PerSecond$/.test(key)) return '/s';
  if (/(^|\.)ratio/.test(key)) return '×';
  return undefined;
}
