/**
 * Helpers for benchmark modules: repeated timing with warm-up, robust statistics, CPU time,
 * process CPU from /proc, and a private tmux server for measuring the real terminal app.
 * Every benchmark runs in its own Node process (see run.ts), started with --expose-gc.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

/** What the harness passes to a benchmark's `run`. */
export interface BenchOptions {
  /** Tiny sizes, only to prove the harness and the benchmark work (CI). */
  readonly smoke: boolean;
  /** Attach a note to the results (e.g. why a figure is NaN). */
  readonly note?: (text: string) => void;
}

export type BenchModule = { run(options: BenchOptions): Promise<Record<string, number>> };

export interface Stats {
  readonly n: number;
  readonly median: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
  readonly p5: number;
  readonly p95: number;
}

/** Nearest-rank percentile of `samples` (0 ≤ p ≤ 100). NaN for no samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function stats(samples: readonly number[]): Stats {
  if (samples.length === 0) return { n: 0, median: NaN, mean: NaN, min: NaN, max: NaN, p5: NaN, p95: NaN };
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return {
    n: sorted.length,
    median,
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
    p5: percentile(sorted, 5),
    p95: percentile(sorted, 95),
  };
}

export interface RepeatOptions {
  /** Untimed runs first (JIT, caches). Default 3. */
  readonly warmup?: number;
  /** Timed runs. Default 20. */
  readonly repeat?: number;
  /** Called before each run, untimed (reset state). */
  readonly before?: () => void | Promise<void>;
}

/** Time `fn` (ms of wall time per call) after a warm-up; returns the statistics of the timed runs. */
export async function repeat(fn: () => unknown, options: RepeatOptions = {}): Promise<Stats> {
  const warmup = options.warmup ?? 3;
  const count = options.repeat ?? 20;
  const samples: number[] = [];
  for (let i = 0; i < warmup + count; i++) {
    await options.before?.();
    const t0 = performance.now();
    await fn();
    const dt = performance.now() - t0;
    if (i >= warmup) samples.push(dt);
  }
  return stats(samples);
}

export interface CpuMeasure<T> {
  readonly result: T;
  /** User + system CPU time of this process while `fn` ran, ms. */
  readonly cpuMs: number;
  readonly wallMs: number;
}

/** CPU time (user + system, this process) and wall time spent in `fn`. */
export async function cpuTime<T>(fn: () => T | Promise<T>): Promise<CpuMeasure<T>> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await fn();
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { result, cpuMs: (c.user + c.system) / 1000, wallMs };
}

/** Run a full GC when the process was started with --expose-gc (run.ts does). */
export function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

export function rssMb(): number {
  return process.memoryUsage().rss / (1024 * 1024);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    clockTicks = Number(r.stdout.trim()) || 100;
  }
  return clockTicks;
}

/**
 * CPU time (ms) used so far by another process, from /proc (Linux).
 * `precise`: the sum of every thread's on-CPU nanoseconds (/proc/<pid>/task/<tid>/schedstat);
 * `ticks`: utime + stime of /proc/<pid>/stat (clock ticks, usually 10 ms resolution).
 * Returns null when the process is gone.
 */
export function processCpuMs(pid: number): { precise: number | null; ticks: number } | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the command name (which may contain spaces) start at field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond();
  let precise: number | null = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      precise += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
    }
  } catch {
    precise = null;
  }
  return { precise, ticks };
}

/** Wait (up to 3 s) for `pid` to be gone. */
export async function exited(pid: number | null): Promise<void> {
  if (pid === null) return;
  for (let i = 0; i < 150; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(20);
  }
}

/** Hang up the pane's process (as closing the terminal would) and wait until it has exited. */
export async function stopPaneProcess(pane: TmuxPane): Promise<void> {
  const pid = pane.dead() ? null : pane.pid();
  if (pid === null) return;
  try {
    process.kill(pid, 'SIGHUP');
  } catch {
    return;
  }
  await exited(pid);
}

export function hasTmux(): boolean {
  return spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;
}

export interface TmuxPane {
  /** Start (or restart) `command` in the pane; returns when tmux has spawned it. */
  respawn(command: string): void;
  /** The visible screen as plain text. */
  capture(): string;
  /** Screen and liveness in one tmux call (cheaper to poll). */
  snapshot(): { screen: string; dead: boolean };
  /** Pid of the pane's process (use `exec` in the command so it is the app itself). */
  pid(): number | null;
  /** True when the pane's process has exited (remain-on-exit keeps the last screen). */
  dead(): boolean;
  sendKeys(...keys: string[]): void;
  /** Kill the private tmux server. */
  close(): void;
}

/**
 * A private tmux server (its own socket) with one detached session of `width`×`height`,
 * holding an idle shell until `respawn` starts the app. `env` is the app's environment.
 */
export function openTmux(options: { width?: number; height?: number; env?: NodeJS.ProcessEnv; cwd?: string } = {}): TmuxPane {
  const socket = `legion-bench-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const env = options.env ?? process.env;
  const tmux = (...args: string[]) => {
    const r = spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', env, cwd: options.cwd });
    if (r.status !== 0) throw new Error(`tmux ${args[0]}: ${r.error?.message ?? (r.stderr.trim() || `exit ${r.status ?? r.signal}`)}`);
    return r.stdout;
  };
  tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'bench', '-x', String(options.width ?? 120), '-y', String(options.height ?? 40), 'sleep 86400');
  tmux('set-option', '-g', 'remain-on-exit', 'on');
  tmux('set-option', '-g', 'status', 'off');
  let closed = false;
  return {
    respawn: (command) => void tmux('respawn-pane', '-k', '-t', 'bench', command),
    capture: () => tmux('capture-pane', '-p', '-t', 'bench'),
    snapshot() {
      const out = tmux('display-message', '-p', '-t', 'bench', '#{pane_dead}', ';', 'capture-pane', '-p', '-t', 'bench');
      const nl = out.indexOf('\n');
      return { dead: out.slice(0, nl).trim() === '1', screen: out.slice(nl + 1) };
    },
    pid() {
      const n = Number(tmux('display-message', '-p', '-t', 'bench', '#{pane_pid}').trim());
      return Number.isFinite(n) && n > 0 ? n : null;
    },
    dead: () => tmux('display-message', '-p', '-t', 'bench', '#{pane_dead}').trim() === '1',
    sendKeys: (...keys) => void tmux('send-keys', '-t', 'bench', ...keys),
    close() {
      if (closed) return;
      closed = true;
      spawnSync('tmux', ['-L', socket, 'kill-server'], { env });
    },
  };
}

/**
 * Poll the screen every `pollMs` until `isReady(screen)`; returns the elapsed ms since `since`
 * (a performance.now() value) or an explanation when the app died or the time ran out.
 */
export async function waitForScreen(
  pane: TmuxPane,
  isReady: (screen: string) => boolean,
  options: { since: number; timeoutMs: number; pollMs?: number },
): Promise<{ ok: true; ms: number; screen: string } | { ok: false; reason: string; screen: string }> {
  const pollMs = options.pollMs ?? 2;
  for (;;) {
    const { screen, dead } = pane.snapshot();
    const now = performance.now();
    if (isReady(screen)) return { ok: true, ms: now - options.since, screen };
    if (dead) return { ok: false, reason: 'the app exited before its first frame', screen };
    if (now - options.since > options.timeoutMs) return { ok: false, reason: `no first frame within ${options.timeoutMs} ms`, screen };
    await sleep(pollMs);
  }
}

/** The first non-empty lines of a screen, squeezed into one line (for notes). */
export function screenSummary(screen: string, maxChars = 160): string {
  const text = screen.split('\n').map((l) => l.trim()).filter(Boolean).join(' | ');
  return text.length > maxChars ? text.slice(0, maxChars - 1) + '…' : text || '(blank screen)';
}

/**
 * What marks the TUI's first full frame on screen: every string must be visible.
 * The status bar names the app and, with no API key, the demo provider (docs/design.md#providers and #the-tui).
 * One constant so the marker follows the TUI as it evolves.
 */
export const FIRST_FRAME_MARKERS: readonly string[] = ['legion', 'demo'];

export function isFirstFrame(screen: string): boolean {
  const lower = screen.toLowerCase();
  return FIRST_FRAME_MARKERS.every((m) => lower.includes(m.toLowerCase()));
}

/** The built CLI (`npm run bench` builds it first). */
export const BUNDLE = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'legion.js');

/** Environment for the app under test: no API keys (demo on the faux provider), no debug. */
export function appEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color', COLORTERM: 'truecolor' };
  for (const k of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL', 'LEGION_PROVIDER', 'LEGION_MODEL', 'LEGION_FAUX_SCRIPT', 'LEGION_DEBUG', 'NO_COLOR']) delete env[k];
  return env;
}

/** A temp workspace with `legion init` done; `cleanup` removes it. */
export function prepareWorkspace(): { dir: string; cleanup(): void } {
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run \`npm run bench\` (it builds first)`);
  const dir = mkdtempSync(join(tmpdir(), 'legion-bench-ws-'));
  const r = spawnSync(process.execPath, [BUNDLE, 'init'], { cwd: dir, env: appEnv(), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`legion init failed: ${r.stderr.trim()}`);
  return {
    dir,
    cleanup: () => {
      // `legion init` recorded this workspace in the user's trust registry, which every start
      // reads: forget it, or each bench run leaves entries behind and later start-up figures
      // read a larger registry than the last run did.
      spawnSync(process.execPath, [BUNDLE, 'trust', '--revoke'], { cwd: dir, env: appEnv(), encoding: 'utf8' });
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 }); // the app may still be writing as it exits
    },
  };
}

/** The `legion` command of the build (scripts/snapshot.mjs): starts from the V8 start-up snapshot, else runs dist/legion.js. */
export const LAUNCHER = resolve(dirname(BUNDLE), 'legion');

/** The shell command tmux runs for the plain bundle (`node dist/legion.js`): `exec` so the pane's pid is the app itself. */
export function legionCommand(args: readonly string[] = []): string {
  return ['exec', shellQuote(process.execPath), shellQuote(BUNDLE), ...args.map(shellQuote)].join(' ');
}

/** The shell command tmux runs for the `legion` command users run (dist/legion; it execs node, so the pane's pid is the app). */
export function launcherCommand(args: readonly string[] = []): string {
  return ['exec', shellQuote(LAUNCHER), ...args.map(shellQuote)].join(' ');
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export type LaunchResult =
  | { ok: true; ms: number; pid: number | null; screen: string }
  | { ok: false; reason: string; screen: string };

/** (Re)start the built TUI in `pane` as users start it (`launcherCommand`) and wait for its first full frame. */
export async function launchTui(pane: TmuxPane, options: { timeoutMs: number; args?: readonly string[] }): Promise<LaunchResult> {
  // The previous app must be gone first: killed by the respawn, it may still be releasing
  // the run lock while the new one starts, and the new one then refuses the locked run.
  await stopPaneProcess(pane);
  const since = performance.now();
  pane.respawn(existsSync(LAUNCHER) ? launcherCommand(options.args) : legionCommand(options.args));
  const r = await waitForScreen(pane, isFirstFrame, { since, timeoutMs: options.timeoutMs });
  return r.ok ? { ...r, pid: pane.pid() } : r;
}
