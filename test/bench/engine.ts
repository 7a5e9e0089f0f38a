/**
 * engine: what engine mode costs per turn (docs/engine.md#performance). One turn = a message,
 * one model call answering with one `shell` call (allowed by a rule), the tool run, one model
 * call with the final text — against a local fake OpenAI-compatible server (no delay).
 * - inProcessMs: median wall time of a turn with the core in this process (engine.kind in-process).
 * - engineMs: the same turn driven by a hub in this process through a real restate-server to one
 *   `legion worker` (a child process on the same machine), the engine's journal on; the two
 *   sides' turns alternate (engine-overhead.ts).
 * - overheadMs: engineMs − inProcessMs. Budget ≤ 15 ms.
 * - latencyP95Ms: a text delta from the model through the worker, the hub (`legion serve`) and
 *   its socket to an attached front end, p95 (engine-stream.ts). Budget ≤ 50 ms.
 * - sessions20CpuRatio: CPU per streamed delta with 20 sessions streaming at once through one
 *   worker (hub + worker + restate-server) ÷ the same in-process, each side warmed by two rounds,
 *   then seven measured rounds a side, alternating: the median of the pairs' ratios
 *   (engine-stream.ts). Budget ≤ 1.5.
 * - recoveryMs: a worker killed mid-stream → the turn's next event from the other worker
 *   (engine-recovery.ts), the worst of the rounds. Budget ≤ 2 s + the 200 ms first retry delay.
 * - floor*: the engine alone, Legion's code left out (engine-floor.ts): the ingress round trip of
 *   a minimal virtual object's invocation with 0 and with 4 no-op journaled steps, the engine
 *   started and the object served as Legion's. Reported, not judged.
 * Smoke: 3 turns, 3 sessions of 10 deltas, one recovery, 10 floor rounds.
 * `LEGION_BENCH_ENGINE_PARTS=overhead,floor` (any of overhead, floor, stream, recovery): only
 * those parts (default: all). `LEGION_BENCH_RESTATE_SETTINGS` (`;`-separated lines of the
 * engine's TOML config): added to the engines of the overhead and floor parts;
 * `LEGION_BENCH_RESTATE_SETTINGS_B`: a second engine with those lines beside the first, its
 * turns alternating with the others (engineBMs, overheadBMs): a knob measured turn by turn;
 * `LEGION_BENCH_WORKER_ROOT_B` (a checkout's path, built): side B's worker runs that checkout's dist/legion.js, a
 * change to the worker against the code before it; `LEGION_BENCH_ENGINE_TURNS`: turns a side (30).
 */
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { BenchOptions } from './harness';
import { percentile } from './harness';
import { streamFigures } from './engine-stream';
import { overheadFigures } from './engine-overhead';
import { recoveryFigures } from './engine-recovery';
import { floorFigures, settingsFromEnv } from './engine-floor';

async function inTempDir<T>(what: string, body: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), `legion-bench-engine-${what}-`));
  try {
    return await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const PARTS = ['overhead', 'floor', 'stream', 'recovery'] as const;
type Part = (typeof PARTS)[number];

/** The parts named in LEGION_BENCH_ENGINE_PARTS (all when unset); an unknown name throws. */
function partsFromEnv(value: string | undefined): ReadonlySet<Part> {
  if (!value) return new Set(PARTS);
  const names = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(PARTS as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`LEGION_BENCH_ENGINE_PARTS: unknown part ${unknown.join(', ')} (parts: ${PARTS.join(', ')})`);
  return new Set(names as Part[]);
}

export async function run(options: BenchOptions): Promise<Record<string, number>> {
  const parts = partsFromEnv(process.env.LEGION_BENCH_ENGINE_PARTS);
  const figures: Record<string, number> = {};
  if (parts.has('overhead')) {
    const settingsB = process.env.LEGION_BENCH_RESTATE_SETTINGS_B === undefined ? undefined : settingsFromEnv({ LEGION_BENCH_RESTATE_SETTINGS: process.env.LEGION_BENCH_RESTATE_SETTINGS_B });
    const turns = options.smoke ? 3 : Number(process.env.LEGION_BENCH_ENGINE_TURNS ?? 30);
    const workerRootB = process.env.LEGION_BENCH_WORKER_ROOT_B;
    const o = await overheadFigures({ turns, settings: settingsFromEnv(), ...(settingsB ? { settingsB } : {}), ...(workerRootB ? { workerRootB } : {}), timing: process.env.LEGION_ENGINE_TIMING === '1' });
    options.note?.(`turn wall time, median of ${turns} a side, alternating: in-process ${o.inProcessMs.toFixed(1)} ms, engine ${o.engineMs.toFixed(1)} ms (p95 ${o.engineP95Ms.toFixed(1)} ms)${o.engineBMs === undefined ? '' : `, engine B ${o.engineBMs.toFixed(1)} ms`}`);
    const cpuNote = Object.entries(o.cpu).map(([side, c]) => `${side} ${c.total.toFixed(1)} ms (this process ${c.self.toFixed(1)}, worker ${c.worker.toFixed(1)}, restate-server ${c.server.toFixed(1)})`).join('; ');
    options.note?.(`turn CPU, medians: ${cpuNote}`);
    Object.assign(figures, { inProcessMs: o.inProcessMs, engineMs: o.engineMs, overheadMs: o.engineMs - o.inProcessMs });
    Object.assign(figures, { inProcessCpuMs: o.cpu['in-process']!.total, engineCpuMs: o.cpu['engine']!.total, overheadCpuMs: o.cpu['engine']!.total - o.cpu['in-process']!.total });
    if (o.engineBMs !== undefined) Object.assign(figures, { engineBMs: o.engineBMs, overheadBMs: o.engineBMs - o.inProcessMs });
  }
  if (parts.has('floor')) {
    const floor = await inTempDir('floor', (d) => floorFigures(d, { rounds: options.smoke ? 10 : 100, settings: settingsFromEnv() }));
    options.note?.(`floor (the engine alone, a minimal object): invocation ${floor.invocationMs.toFixed(1)} ms (p95 ${floor.invocationP95Ms.toFixed(1)}), with 4 journaled steps ${floor.fourStepsMs.toFixed(1)} ms (p95 ${floor.fourStepsP95Ms.toFixed(1)}), ${floor.perStepMs.toFixed(2)} ms a step; CPU per 4-step invocation: restate-server ${floor.serverCpuMs.toFixed(2)} ms, worker ${floor.workerCpuMs.toFixed(2)} ms`);
    Object.assign(figures, { floorInvocationMs: floor.invocationMs, floorFourStepsMs: floor.fourStepsMs, floorPerStepMs: floor.perStepMs });
  }
  if (parts.has('stream')) {
    const stream = await inTempDir('stream', (d) => streamFigures(d, options.smoke ? { chunks: 10, delayMs: 10, sessions: 3, warmRounds: 1, measuredRounds: 1 } : { chunks: 100, delayMs: 20, sessions: 20, warmRounds: 2, measuredRounds: 7 }));
    const p = stream.engineParts;
    options.note?.(`latency model → worker → hub → attached core: p50 ${stream.latencyP50Ms.toFixed(1)} ms, p95 ${stream.latencyP95Ms.toFixed(1)} ms; model → legion serve in-process → attached core: p50 ${stream.inProcessLatencyP50Ms.toFixed(1)} ms, p95 ${stream.inProcessLatencyP95Ms.toFixed(1)} ms`);
    options.note?.(`CPU per delta, ${options.smoke ? 3 : 20} sessions at once: engine ${stream.engineCpuPerDeltaMs.toFixed(3)} ms (hub ${p.hub.toFixed(3)}, worker ${p.worker.toFixed(3)}, restate-server ${p.server.toFixed(3)}), in-process ${stream.inProcessCpuPerDeltaMs.toFixed(3)} ms (median rounds; each round: engine ${stream.engineRoundsMs.map((m) => m.toFixed(3)).join(', ')}, in-process ${stream.inProcessRoundsMs.map((m) => m.toFixed(3)).join(', ')}; ratio: the median of the rounds' ${stream.engineRoundsMs.map((m, i) => (m / stream.inProcessRoundsMs[i]!).toFixed(2)).join(', ')})`);
    Object.assign(figures, {
      latencyP95Ms: stream.latencyP95Ms,
      inProcessLatencyP95Ms: stream.inProcessLatencyP95Ms,
      sessions20CpuPerDeltaMs: stream.engineCpuPerDeltaMs,
      sessions20InProcessCpuPerDeltaMs: stream.inProcessCpuPerDeltaMs,
      sessions20CpuRatio: stream.ratio,
    });
  }
  if (parts.has('recovery')) {
    const recovery = await inTempDir('recovery', (d) => recoveryFigures(d, options.smoke ? 1 : 5));
    options.note?.(`recovery after kill -9, ${recovery.recoveryMs.length} rounds: ${recovery.recoveryMs.map((m) => m.toFixed(0)).join(', ')} ms (model asked again after ${recovery.reaskMs.map((m) => m.toFixed(0)).join(', ')} ms)`);
    Object.assign(figures, { recoveryMs: Math.max(...recovery.recoveryMs), recoveryMedianMs: percentile(recovery.recoveryMs, 50) });
  }
  return figures;
}
