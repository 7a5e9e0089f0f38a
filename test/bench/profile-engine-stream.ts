/**
 * Profile the 20-session streaming load of the engine bench (a helper for docs/engine.md's
 * performance part, not a benchmark): the stack of engine-stream.ts with `legion worker` and
 * `legion serve` preloading profile-preload.cjs, warm-up rounds, then measured rounds between
 * two SIGUSR2 (the profiler started, then stopped and written): self time by function and by
 * file, with each process's CPU per delta.
 * Usage: node --import tsx test/bench/profile-engine-stream.ts <out dir> [engine|in-process] [rounds] [chunks]
 * (chunks: text deltas a turn, default 100; few make the per-turn work stand out)
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { ChildProcess } from 'node:child_process';
import { processCpuMs, sleep } from './harness';
import { BUILT, startEngineStack } from '../helpers/engine-fixture';
import { round } from './engine-stream';

const out = resolve(process.argv[2] ?? 'engine-profile');
const mode = process.argv[3] === 'in-process' ? 'in-process' : 'engine';
const rounds = Number(process.argv[4] ?? 4);
const chunks = Number(process.argv[5] ?? 100);
const SESSIONS = 20;
mkdirSync(out, { recursive: true });

const cpuOf = (pid: number): number => {
  const cpu = processCpuMs(pid);
  return cpu ? cpu.precise ?? cpu.ticks : NaN;
};

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number }

/** Self time (ms) of the samples, by function and by file. */
function summarize(profile: Profile): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfFn = new Map<string, number>();
  const selfFile = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const next = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(profile.samples[i]!)!;
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^.*node_modules\//, 'nm:').replace(/^file:\/\/.*?\/(src|bin)\//, '$1/');
    const ms = next / 1000;
    if (functionName === '(idle)') continue;
    total += ms;
    const fn = `${functionName || '(anon)'} ${file}:${lineNumber + 1}`;
    selfFn.set(fn, (selfFn.get(fn) ?? 0) + ms);
    const fileKey = file.replace(/:\d+$/, '') || functionName;
    selfFile.set(fileKey, (selfFile.get(fileKey) ?? 0) + ms);
  }
  const top = (m: Map<string, number>, n: number): string => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `  ${v.toFixed(1).padStart(8)} ms ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`).join('\n');
  return `busy samples ${total.toFixed(0)} ms\nby function:\n${top(selfFn, 45)}\nby file:\n${top(selfFile, 30)}\n`;
}

const dir = mkdtempSync(join(tmpdir(), 'legion-engine-profile-'));
// Node 20 refuses --cpu-prof in NODE_OPTIONS: a preload starts and stops the profiler on SIGUSR2.
const PRELOAD = join(dirname(fileURLToPath(import.meta.url)), 'profile-preload.cjs');
const profOpts = (name: string): Record<string, string> => ({ NODE_OPTIONS: `--require ${PRELOAD}`, LEGION_PROFILE_OUT: join(out, name) });
const stack = await startEngineStack(dir, { answerChunks: chunks, delayMs: 20, workerEnv: profOpts('worker'), serveEnv: profOpts('serve'), entry: BUILT });
try {
  if (mode === 'in-process') {
    const configFile = join(dir, '.legion', 'config.yaml');
    writeFileSync(configFile, readFileSync(configFile, 'utf8').replace(/engine: .*\n/, 'engine: { kind: in-process }\n'));
    await stack.restartServe();
  }
  const remote = await stack.attach('profile');
  const names = Array.from({ length: SESSIONS }, (_, i) => `s${i}`);
  for (let i = 0; i < 3; i++) await round(remote, names, `warm up ${i}`);
  const pids: Record<string, number> = mode === 'engine' ? { serve: stack.serve.pid!, worker: stack.worker.child.pid!, server: stack.engine.pid } : { serve: stack.serve.pid! };
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuOf(pid)]));
  const children: [string, ChildProcess][] = mode === 'engine' ? [['worker', stack.worker.child], ['serve', stack.serve]] : [['serve', stack.serve]];
  for (const [, child] of children) child.kill('SIGUSR2');
  await sleep(200);
  let deltas = 0;
  for (let i = 0; i < rounds; i++) deltas += await round(remote, names, `measured ${i}`);
  const perDelta = Object.entries(pids).map(([k, pid]) => `${k} ${((cpuOf(pid) - before[k]!) / deltas).toFixed(3)} ms`).join(', ');
  for (const [, child] of children) child.kill('SIGUSR2');
  await sleep(2000);
  let report = `${mode}: ${deltas} deltas in ${rounds} rounds of ${SESSIONS} sessions; CPU per delta: ${perDelta}\n`;
  for (const [name] of children) {
    const file = `${join(out, name)}.cpuprofile`;
    const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
    report += `\n== ${name} (${file}), ${deltas} deltas\n${summarize(profile)}`;
  }
  writeFileSync(join(out, `${mode}.txt`), report);
  process.stdout.write(report);
} finally {
  await stack.close();
  rmSync(dir, { recursive: true, force: true });
}
