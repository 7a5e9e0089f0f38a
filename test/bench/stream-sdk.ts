/**
 * stream-sdk: a streamed delta on the path users run — the real Anthropic SDK over HTTP from a
 * local server (a child process) replaying the vendor's recorded text stream with 3,000
 * one-character deltas, 1 ms apart (test/helpers/stream-replay.ts).
 * - headless: the built bundle, `node dist/legion.js run hi`, in a child process; its CPU time
 *   (user + system, from bash's `times`) with 6,000 deltas minus the same with 300, over the
 *   5,700 deltas between: the cost of a delta, start-up excluded. Medians of 5.
 * - TUI: the real App (Ink's renderer on fake TTY streams, production React) on a core composed
 *   in this process; CPU of the process from the first send until every lane is idle.
 *   1 lane: after an unmeasured warm-up pass of 3,000 deltas (the process's first pass pays
 *   module loading, the JIT's warm-up and first-use set-up: about twice the steady figure), 5 interleaved pairs of
 *   passes with 300 and 3,000 deltas; (median of 3,000 − median of 300) / 2,700, as headless,
 *   so a turn's own fixed cost (session, checkpoint store, sandbox probe) is taken out.
 *   4 lanes: one pass of 4 sessions of ur-agent streaming 3,000 deltas each at once, per delta.
 * Also the size of events.jsonl per delta (the ledger coalesces text deltas).
 * LEGION_BENCH_PROFILE=<dir> writes a .cpuprofile of each TUI pass (node:inspector).
 * Budgets: ≤ 0.12 ms headless, ≤ 0.15 ms TUI with 1 lane, ≤ 0.30 ms TUI with 4 lanes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchOptions } from './harness';
import { sleep } from './harness';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const KEY = 'sk-ant-bench-key-0123456789';

interface Replay {
  readonly url: string;
  stop(): void;
}

async function startReplay(deltas: number, intervalMs: number): Promise<Replay> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(HERE, 'replay-child.ts'), JSON.stringify({ vendor: 'anthropic', deltas, intervalMs })], {
    cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolvePort, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const line = buffer.split('\n')[0];
      if (buffer.includes('\n') && line) resolvePort((JSON.parse(line) as { port: number }).port);
    });
    child.on('exit', (code) => reject(new Error(`replay server exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => void child.stdin!.end() };
}

function ledgerBytes(workspace: string): { bytes: number; lines: number } {
  const runs = join(workspace, '.legion', 'runs');
  let bytes = 0;
  let lines = 0;
  for (const run of readdirSync(runs)) {
    const file = join(runs, run, 'events.jsonl');
    bytes += statSync(file).size;
    lines += spawnSync('wc', ['-l', file], { encoding: 'utf8' }).stdout.trim().split(/\s+/).map(Number)[0] ?? 0;
  }
  return { bytes, lines };
}

/** One `legion run` of the bundle: CPU seconds of the child (bash `times`), and the ledger's size. */
async function headlessOnce(deltas: number): Promise<{ cpuMs: number; bytes: number; lines: number }> {
  const replay = await startReplay(deltas, 1);
  const workspace = mkdtempSync(join(tmpdir(), 'legion-bench-stream-'));
  try {
    const env = { ...process.env, HOME: workspace, ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: replay.url, LEGION_TEST: undefined, CI: undefined };
    const script = `node ${JSON.stringify(join(ROOT, 'dist', 'legion.js'))} run hi > /dev/null < /dev/null; code=$?; times; exit $code`;
    const r = spawnSync('bash', ['-c', script], { cwd: workspace, env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`legion run failed (${r.status}): ${r.stderr}`);
    // `times`: shell user/system, then children user/system ("0m1.234s 0m0.056s").
    const children = r.stdout.trim().split('\n').at(-1)!.split(/\s+/).map((t) => {
      const m = /^(\d+)m([\d.]+)s$/.exec(t);
      return m ? Number(m[1]) * 60_000 + Number(m[2]) * 1000 : NaN;
    });
    return { cpuMs: children[0]! + children[1]!, ...ledgerBytes(workspace) };
  } finally {
    replay.stop();
    rmSync(workspace, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One TUI pass: CPU ms of this process from the first send until every lane is idle (and the last frame). */
export async function tuiPass(lanes: number, deltas: number, profileDir: string | undefined): Promise<{ cpuMs: number; cpuPerDeltaMs: number; frames: number }> {
  const { composeApp } = await import('../../src/cli/compose');
  const { mountBenchApp } = await import('../helpers/tui-bench');
  const replay = await startReplay(deltas, 1);
  const workspace = mkdtempSync(join(tmpdir(), 'legion-bench-stream-tui-'));
  const context = {
    args: { command: 'start', positionals: [], flags: new Map(), global: { help: false, version: false, plain: false } },
    io: { stdout: () => undefined, stderr: () => undefined, env: { HOME: workspace, ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: replay.url }, cwd: workspace, isTTY: false },
    appDir: ROOT,
    workspaceRoot: workspace,
  };
  const app = await composeApp(context as never, {});
  const ui = mountBenchApp(app.core, { columns: 200, rows: 50, maxLanes: 4 });
  const session = profileDir ? new Session() : undefined;
  try {
    await sleep(200);
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    const cpu0 = process.cpuUsage();
    const names = ['default', 'b', 'c', 'd'].slice(0, lanes);
    const sent = names.map((name) => app.core.send('ur-agent', 'Please write a long answer.', name));
    const ids = sent.map((s) => {
      if (!s.ok) throw new Error(s.error);
      return s.sessionId;
    });
    await Promise.all(ids.map((id) => app.core.idle(id)));
    await sleep(100); // the last frame
    const cpu = process.cpuUsage(cpu0);
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      mkdirSync(profileDir!, { recursive: true });
      writeFileSync(join(profileDir!, `stream-sdk-tui-${lanes}-${deltas}.cpuprofile`), JSON.stringify(profile));
    }
    const cpuMs = (cpu.user + cpu.system) / 1000;
    return { cpuMs, cpuPerDeltaMs: cpuMs / (deltas * lanes), frames: ui.frames.count };
  } finally {
    session?.disconnect();
    ui.unmount();
    await app.close('bench');
    replay.stop();
    rmSync(workspace, { recursive: true, force: true });
  }
}

/** The 1-lane figure: a warm-up pass, then 5 interleaved pairs (small, big); the difference of the medians per delta. */
async function oneLane(big: number, small: number, profileDir: string | undefined, note: BenchOptions['note']): Promise<{ perDeltaMs: number; frames: number }> {
  await tuiPass(1, big, undefined);
  const bigs: number[] = [];
  const smalls: number[] = [];
  let frames = 0;
  for (let i = 0; i < 5; i++) {
    smalls.push((await tuiPass(1, small, undefined)).cpuMs);
    const b = await tuiPass(1, big, i === 0 ? profileDir : undefined);
    bigs.push(b.cpuMs);
    frames = b.frames;
  }
  note?.(`TUI, 1 lane: ${median(smalls).toFixed(0)} ms CPU for ${small} deltas, ${median(bigs).toFixed(0)} ms for ${big} (medians of 5 after a warm-up pass of ${big})`);
  return { perDeltaMs: (median(bigs) - median(smalls)) / (big - small), frames };
}

export async function run({ smoke, note }: BenchOptions): Promise<Record<string, number>> {
  // Before React and Ink load: production React, and Ink not in CI mode (it skips frames there).
  process.env.NODE_ENV = 'production';
  delete process.env.CI;
  const big = smoke ? 200 : 3000;
  const small = smoke ? 20 : 300;
  // Headless: a longer stream (6,000 deltas) so the start's own ±50 ms of CPU weighs half as much per delta.
  const headlessBig = smoke ? big : 6000;
  // Five pairs: one start of the bundle varies by ±10 % on this machine, and the figure is the
  // difference of two medians.
  const rounds = smoke ? 1 : 5;

  if (!smoke) await headlessOnce(small); // the bundle's code cache is written by this first start
  const bigs: number[] = [];
  const smalls: number[] = [];
  let ledger = { bytes: 0, lines: 0 };
  for (let i = 0; i < rounds; i++) {
    smalls.push((await headlessOnce(small)).cpuMs);
    const b = await headlessOnce(headlessBig);
    bigs.push(b.cpuMs);
    ledger = b;
  }
  const headlessPerDelta = (median(bigs) - median(smalls)) / (headlessBig - small);
  note?.(`headless: ${median(smalls).toFixed(0)} ms CPU for ${small} deltas, ${median(bigs).toFixed(0)} ms for ${headlessBig}; events.jsonl ${ledger.lines} lines, ${ledger.bytes} bytes`);

  const profileDir = process.env.LEGION_BENCH_PROFILE;
  // Smoke (CI, 60 s for everything on a busy machine): the 4-lane pass only.
  const one = smoke ? { perDeltaMs: NaN, frames: 0 } : await oneLane(big, small, profileDir, note);
  const four = await tuiPass(4, big, profileDir);
  note?.(`TUI: ${one.frames} frames in a 1-lane pass of ${big} deltas, ${four.frames} with 4 lanes`);
  return {
    headlessCpuPerDeltaMs: headlessPerDelta,
    tui1CpuPerDeltaMs: one.perDeltaMs,
    tui4CpuPerDeltaMs: four.cpuPerDeltaMs,
    ledgerBytesPerDelta: ledger.bytes / headlessBig,
    ledgerLines: ledger.lines,
    deltas: big,
  };
}
