/**
 * engine: what engine mode costs per turn (docs/engine.md#performance). One turn = a message,
 * one model call answering with one `shell` call (allowed by a rule), the tool run, one model
 * call with the final text — against a local fake OpenAI-compatible server (no delay).
 * - inProcessMs: median wall time of a turn with the core in this process (engine.kind in-process).
 * - engineMs: the same turn driven by a hub in this process through a real restate-server to one
 *   `legion worker` (a child process on the same machine), the engine's journal on.
 * - overheadMs: engineMs − inProcessMs. Budget ≤ 15 ms.
 * - latencyP95Ms: a text delta from the model through the worker, the hub (`legion serve`) and
 *   its socket to an attached front end, p95 (engine-stream.ts). Budget ≤ 50 ms.
 * - sessions20CpuRatio: CPU per streamed delta with 20 sessions streaming at once through one
 *   worker (hub + worker + restate-server) ÷ the same in-process (engine-stream.ts). Budget ≤ 1.5.
 * - recoveryMs: a worker killed mid-stream → the turn's next event from the other worker
 *   (engine-recovery.ts), the worst of the rounds. Budget ≤ 2 s + the 200 ms first retry delay.
 * Smoke: 3 turns, 3 sessions of 10 deltas, one recovery.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { BenchOptions } from './harness';
import { percentile } from './harness';
import { composeApp } from '../../src/cli/compose';
import { freePort } from '../../src/engine/local-engine';
import { APP_DIR } from '../helpers/crash-workspace';
import { killHard, setupEngineWorkspace, startEngine, startFakeModel, startWorker } from '../helpers/engine-fixture';
import type { CommandContext } from '../../src/cli/command';
import { streamFigures } from './engine-stream';
import { recoveryFigures } from './engine-recovery';

function contextFor(dir: string, env: Record<string, string>): CommandContext {
  return {
    args: { command: 'run', positionals: [], flags: new Map(), global: { help: false, version: false, plain: false } },
    io: { stdout: () => undefined, stderr: () => undefined, env, cwd: dir, isTTY: false },
    appDir: APP_DIR,
    workspaceRoot: dir,
  };
}

async function timeTurns(context: CommandContext, turns: number): Promise<number[]> {
  const app = await composeApp(context, { newRun: true, headless: { approve: 'deny' } });
  const samples: number[] = [];
  try {
    for (let i = 0; i < turns; i++) {
      const start = performance.now();
      const sent = app.core.send('builder', `turn ${i}`);
      if (!sent.ok) throw new Error(sent.error);
      await app.core.idle(sent.sessionId);
      const outcome = app.core.lastOutcome(sent.sessionId);
      if (outcome?.kind !== 'done') throw new Error(`turn ${i}: ${JSON.stringify(outcome)}`);
      samples.push(performance.now() - start);
    }
  } finally {
    await app.close('bench over');
  }
  return samples;
}

async function inTempDir<T>(what: string, body: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), `legion-bench-engine-${what}-`));
  try {
    return await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(options: BenchOptions): Promise<Record<string, number>> {
  const turns = options.smoke ? 3 : 15;
  const dir = mkdtempSync(join(tmpdir(), 'legion-bench-engine-'));
  const model = await startFakeModel({ answerChunks: 5, delayMs: 0 });
  const engine = await startEngine(dir);
  try {
    const env = await setupEngineWorkspace(dir, model.url, engine);
    const engineConfig = await import('node:fs').then((fs) => fs.readFileSync(join(dir, '.legion', 'config.yaml'), 'utf8'));
    // In-process: the same workspace with the engine line switched off.
    await writeFile(join(dir, '.legion', 'config.yaml'), engineConfig.replace(/engine: .*\n/, 'engine: { kind: in-process }\n'));
    const local = await timeTurns(contextFor(dir, env), turns + 1);
    await writeFile(join(dir, '.legion', 'config.yaml'), engineConfig);
    // LEGION_ENGINE_TIMING=1: the worker's phases of each turn (docs/engine.md#performance) go to stderr.
    const timing = process.env.LEGION_ENGINE_TIMING === '1';
    const worker = await startWorker(dir, { ...env, ...(timing ? { LEGION_ENGINE_TIMING: '1' } : {}) }, await freePort());
    let remote: number[];
    try {
      remote = await timeTurns(contextFor(dir, env), turns + 1);
    } finally {
      await killHard(worker.child);
      if (timing) process.stderr.write(worker.log.join(''));
    }
    // The first turn of each compiles its path: left out.
    const inProcessMs = percentile(local.slice(1), 50);
    const engineMs = percentile(remote.slice(1), 50);
    options.note?.(`turn wall time, median of ${turns}: in-process ${inProcessMs.toFixed(1)} ms, engine ${engineMs.toFixed(1)} ms (p95 ${percentile(remote.slice(1), 95).toFixed(1)} ms)`);
    const stream = await inTempDir('stream', (d) => streamFigures(d, options.smoke ? { chunks: 10, delayMs: 10, sessions: 3 } : { chunks: 100, delayMs: 20, sessions: 20 }));
    const parts = stream.engineParts;
    options.note?.(`latency model → worker → hub → attached core: p50 ${stream.latencyP50Ms.toFixed(1)} ms, p95 ${stream.latencyP95Ms.toFixed(1)} ms; model → legion serve in-process → attached core: p50 ${stream.inProcessLatencyP50Ms.toFixed(1)} ms, p95 ${stream.inProcessLatencyP95Ms.toFixed(1)} ms`);
    options.note?.(`CPU per delta, ${options.smoke ? 3 : 20} sessions at once: engine ${stream.engineCpuPerDeltaMs.toFixed(3)} ms (hub ${parts.hub.toFixed(3)}, worker ${parts.worker.toFixed(3)}, restate-server ${parts.server.toFixed(3)}), in-process ${stream.inProcessCpuPerDeltaMs.toFixed(3)} ms`);
    const recovery = await inTempDir('recovery', (d) => recoveryFigures(d, options.smoke ? 1 : 5));
    options.note?.(`recovery after kill -9, ${recovery.recoveryMs.length} rounds: ${recovery.recoveryMs.map((m) => m.toFixed(0)).join(', ')} ms (model asked again after ${recovery.reaskMs.map((m) => m.toFixed(0)).join(', ')} ms)`);
    return {
      inProcessMs, engineMs, overheadMs: engineMs - inProcessMs,
      latencyP95Ms: stream.latencyP95Ms,
      inProcessLatencyP95Ms: stream.inProcessLatencyP95Ms,
      sessions20CpuPerDeltaMs: stream.engineCpuPerDeltaMs,
      sessions20InProcessCpuPerDeltaMs: stream.inProcessCpuPerDeltaMs,
      sessions20CpuRatio: stream.engineCpuPerDeltaMs / stream.inProcessCpuPerDeltaMs,
      recoveryMs: Math.max(...recovery.recoveryMs),
      recoveryMedianMs: percentile(recovery.recoveryMs, 50),
    };
  } finally {
    try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
