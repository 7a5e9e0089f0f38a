/**
 * The 20-session round of engine-stream.ts, each side's CPU per delta by process and thread
 * (a helper for docs/engine.md's performance part, not a benchmark): after warm-up rounds, the
 * two sides' rounds alternate; per round, each thread's CPU (schedstat) ÷ the deltas received,
 * averaged over the rounds (a node process's threads: `main`, else `t<n>` by creation order, V8's
 * helpers first); then each process's idle CPU second by second, and its memory
 * (docs/decisions/engine.md). `chunks`: deltas a turn (1: nearly all of a turn's CPU is per turn).
 * Usage: node --import tsx test/bench/engine-threads.ts [rounds] [chunks]
 * ENGINE_ROOT / LOCAL_ROOT: a built checkout to run the engine's processes / in-process
 * `legion serve` from (default this one), to compare two versions run after run. Also each
 * process's write and read syscalls and its main thread's wake-ups a delta.
 * W_NODE_OPTIONS / H_NODE_OPTIONS / L_NODE_OPTIONS: NODE_OPTIONS of the worker / the hub / in-process `legion serve`.
 * WARM: warm-up rounds a side before the measured ones (default 2, as the bench).
 * Write its output to a file: piped into `head` it dies of EPIPE before closing the stack, and
 * restate-server, the worker and `legion serve` stay.
 */
import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILT, startEngineStack } from '../helpers/engine-fixture';
import { round, startInProcessSide } from './engine-stream';

const rounds = Number(process.argv[2] ?? 5);
const chunks = Number(process.argv[3] ?? 100);

function threads(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  const tids = readdirSync(`/proc/${pid}/task`).map(Number).sort((a, b) => a - b);
  for (const tid of tids) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim().replace(/\d+$/, 'N');
      const comm = name === 'node' ? (tid === pid ? 'main' : `t${tids.indexOf(tid)}`) : name;
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      out.set(comm, (out.get(comm) ?? 0) + ns / 1e6);
    } catch { /* gone */ }
  }
  return out;
}
/** Write and read syscalls (/proc/<pid>/io) and the main thread's wake-ups (voluntary context switches). */
function io(pid: number): Map<string, number> {
  const text = readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  const wakeups = Number(/^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return new Map([['writes', field('syscw')], ['reads', field('syscr')], ['main wake-ups', wakeups]]);
}
const diff = (a: Map<string, number>, b: Map<string, number>, acc: Map<string, number>, per: number): void => {
  for (const [k, v] of b) acc.set(k, (acc.get(k) ?? 0) + (v - (a.get(k) ?? 0)) / per);
};

const dir = mkdtempSync(join(tmpdir(), 'legion-engine-threads-'));
const stack = await startEngineStack(dir, { answerChunks: chunks, delayMs: 20, entry: process.env.ENGINE_ROOT ? { kind: 'bundle', root: process.env.ENGINE_ROOT } : BUILT, ...(process.env.W_NODE_OPTIONS ? { workerEnv: { NODE_OPTIONS: process.env.W_NODE_OPTIONS } } : {}), ...(process.env.H_NODE_OPTIONS ? { serveEnv: { NODE_OPTIONS: process.env.H_NODE_OPTIONS } } : {}) });
let local: Awaited<ReturnType<typeof startInProcessSide>> | undefined;
try {
  const remote = await stack.attach('threads');
  local = await startInProcessSide(stack, process.env.L_NODE_OPTIONS ? { NODE_OPTIONS: process.env.L_NODE_OPTIONS } : {}, process.env.LOCAL_ROOT ? { kind: 'bundle', root: process.env.LOCAL_ROOT } : BUILT);
  const names = Array.from({ length: 20 }, (_, i) => `s${i}`);
  for (let i = 0; i < Number(process.env.WARM ?? 2); i++) {
    await round(remote, names, `warm ${i}`);
    await round(local.remote, names, `warm local ${i}`);
  }
  const pids: Record<string, number> = { hub: stack.serve.pid!, worker: stack.worker.child.pid!, server: stack.engine.pid, local: local.serve.pid! };
  const acc: Record<string, Map<string, number>> = { hub: new Map(), worker: new Map(), server: new Map(), local: new Map() };
  const calls: Record<string, Map<string, number>> = { hub: new Map(), worker: new Map(), server: new Map(), local: new Map() };
  const totals: { engine: number[]; local: number[] } = { engine: [], local: [] };
  for (let i = 0; i < rounds; i++) {
    const before = Object.fromEntries(['hub', 'worker', 'server'].map((k) => [k, threads(pids[k]!)]));
    const ioBefore = Object.fromEntries(['hub', 'worker', 'server'].map((k) => [k, io(pids[k]!)]));
    const deltas = await round(remote, names, `m ${i}`);
    let sum = 0;
    for (const k of ['hub', 'worker', 'server']) diff(ioBefore[k]!, io(pids[k]!), calls[k]!, deltas * rounds);
    for (const k of ['hub', 'worker', 'server']) {
      const after = threads(pids[k]!);
      const one = new Map<string, number>();
      diff(before[k]!, after, one, deltas);
      for (const [t, v] of one) { acc[k]!.set(t, (acc[k]!.get(t) ?? 0) + v / rounds); sum += v; }
    }
    totals.engine.push(sum);
    const lb = threads(pids.local!);
    const lio = io(pids.local!);
    const ld = await round(local.remote, names, `m local ${i}`);
    diff(lio, io(pids.local!), calls.local!, ld * rounds);
    const one = new Map<string, number>();
    diff(lb, threads(pids.local!), one, ld);
    let lsum = 0;
    for (const [t, v] of one) { acc.local!.set(t, (acc.local!.get(t) ?? 0) + v / rounds); lsum += v; }
    totals.local.push(lsum);
  }
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1]!;
  const ratios = totals.engine.map((e, i) => e / totals.local[i]!);
  process.stdout.write(`rounds engine ${totals.engine.map((x) => x.toFixed(3)).join(' ')}\nrounds local  ${totals.local.map((x) => x.toFixed(3)).join(' ')}\nratio median ${med(ratios).toFixed(2)} (${ratios.map((x) => x.toFixed(2)).join(' ')})\n`);
  for (const [k, m] of Object.entries(acc)) {
    const total = [...m.values()].reduce((a, b) => a + b, 0);
    process.stdout.write(`${k} ${(total * 1000).toFixed(1)} µs/delta: ${[...m].sort((a, b) => b[1] - a[1]).filter(([, v]) => v > 0.0005).map(([t, v]) => `${t} ${(v * 1000).toFixed(1)}`).join(', ')}\n`);
  }
  for (const [k, m] of Object.entries(calls)) process.stdout.write(`${k} a delta: ${[...m].map(([t, v]) => `${t} ${v.toFixed(3)}`).join(', ')}\n`);
  {
    // Idle CPU, second by second after the last round.
    let prev = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, threads(pid)]));
    const rows: string[] = [];
    for (let s = 1; s <= 8; s++) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, threads(pid)]));
      rows.push(`idle s${s}: ` + Object.keys(pids).map((k) => {
        const one = new Map<string, number>();
        diff(prev[k]!, now[k]!, one, 1);
        return `${k} ${[...one.values()].reduce((a, b) => a + b, 0).toFixed(1)}`;
      }).join(', '));
      prev = now;
    }
    process.stdout.write(rows.join('\n') + '\n');
  }
  for (const [k, pid] of Object.entries(pids)) {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const pick = (f: string): string => /^(\w+):\s+(\d+ kB)/m.exec(status.slice(status.indexOf(f + ':')))?.[2] ?? '?';
    process.stdout.write(`${k}: rss ${pick('VmRSS')}, anon ${pick('RssAnon')}, pte ${pick('VmPTE')}, maps ${readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n').length}\n`);
  }
} finally {
  await local?.close();
  await stack.close();
  rmSync(dir, { recursive: true, force: true });
}
