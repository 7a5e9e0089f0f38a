/**
 * engine (streaming part, docs/engine.md#performance): deltas through the engine as a front end
 * attached to `legion serve` gets them. One workspace: restate-server, one `legion worker`,
 * `legion serve` (the hub, a child process; it and the worker run the built bundle,
 * `dist/legion.js`, as users run them), a remote core attached to its socket in this
 * process; the fake model (this process too) streams `chunks` pieces `delayMs` apart.
 * - latency: for each text delta, the time from the model server writing its chunk to the
 *   attached core delivering it (one clock: both in this process). It includes the worker's
 *   read of the chunk off loopback HTTP before its emit, so it bounds worker → front end from
 *   above. One session, its second and third turns (the first compiles the path); the same
 *   in-process beside it.
 * - CPU per delta with `sessions` sessions of one run streaming at once: CPU of the serving
 *   processes (engine: hub + worker + restate-server; in-process: `legion serve` alone) ÷ the
 *   deltas the attached core received. Each side is warmed by `warmRounds` rounds, then measured
 *   over `measuredRounds` rounds: the median round's figure (one warm-up round left the
 *   in-process side still compiling: its first measured round took up to 1.5× its next ones,
 *   which flattered the engine's ratio). In-process is a second workspace of the same agent and
 *   model with `engine: { kind: in-process }` and its own `legion serve`, running beside the
 *   engine's stack: the two sides' rounds alternate, so a change in the machine's load (the
 *   in-process rounds moved between 0.21 and 0.32 ms when all of one side ran before the other)
 *   falls on both; the ratio is the median of each pair's (an engine round ÷ the in-process
 *   round right after it).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile, processCpuMs, sleep } from './harness';
import { BUILT, type CliEntry, killHard, setupEngineWorkspace, spawnLegion, startEngineStack, type EngineStack } from '../helpers/engine-fixture';
import { until } from '../helpers/processes';
import { attachRemote, type RemoteCore } from '../../src/serve/remote-core';

export interface StreamFigures {
  readonly latencyP95Ms: number;
  readonly latencyP50Ms: number;
  /** The same delivery with the core in `legion serve` (no engine), for comparison. */
  readonly inProcessLatencyP50Ms: number;
  readonly inProcessLatencyP95Ms: number;
  readonly engineCpuPerDeltaMs: number;
  readonly inProcessCpuPerDeltaMs: number;
  /** The engine's CPU per delta by process (hub, worker, restate-server) in its median round, for the note. */
  readonly engineParts: { hub: number; worker: number; server: number };
  /** Each measured round's CPU per delta (engine: the three processes'), for the note. */
  readonly engineRoundsMs: number[];
  readonly inProcessRoundsMs: number[];
  /** The ratio engine ÷ in-process: the median of the pairs' (each engine round ÷ the in-process round right after it). */
  readonly ratio: number;
}

/** The median of `rounds` by `key` (an odd count: the middle one). */
function medianBy<T>(rounds: readonly T[], key: (r: T) => number): T {
  const sorted = [...rounds].sort((a, b) => key(a) - key(b));
  return sorted[(sorted.length - 1) >> 1]!;
}

const cpuOf = (pid: number): number => {
  const cpu = processCpuMs(pid);
  if (!cpu) throw new Error(`process ${pid} is gone`);
  return cpu.precise ?? cpu.ticks;
};

/** Send one message to each of `names` at once (builder's sessions), wait until all are idle; the deltas received. */
export async function round(remote: RemoteCore, names: readonly string[], text: string): Promise<number> {
  let deltas = 0;
  const off = remote.bus.subscribe('text-delta', () => void (deltas += 1));
  try {
    const ids = names.map((name) => {
      const sent = remote.send('builder', text, name);
      if (!sent.ok) throw new Error(sent.error);
      return sent.sessionId;
    });
    await sleep(50);
    await Promise.all(ids.map((id) => remote.idle(id)));
    return deltas;
  } finally {
    off();
  }
}

/** Latency of each delta of one turn: model write → attached core (ms). */
async function latencies(stack: EngineStack, remote: RemoteCore, text: string): Promise<number[]> {
  const lags: number[] = [];
  const off = remote.bus.subscribe('text-delta', (event) => {
    const now = performance.timeOrigin + performance.now();
    const piece = /piece (\d+)\./.exec(event.text);
    const request = stack.model.requests.findLast((r) => r.last === 'tool');
    // Chunk 0 of an answer is the role; piece i is chunk i + 1.
    const written = piece && request ? request.writtenAt[Number(piece[1]) + 1] : undefined;
    if (written !== undefined) lags.push(now - written);
  });
  try {
    await round(remote, ['default'], text);
    return lags;
  } finally {
    off();
  }
}

/**
 * `legion serve` in-process on a second workspace (the builder's, with `engine: in-process`,
 * the same fake model), and a core attached to it: the in-process side, beside the engine's
 * stack, so the two sides' rounds can alternate.
 */
export async function startInProcessSide(stack: EngineStack, extraEnv: Record<string, string> = {}, entry: CliEntry = BUILT): Promise<{ serve: ChildProcess; remote: RemoteCore; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'legion-bench-engine-in-process-'));
  let serve: ChildProcess | undefined;
  let remote: RemoteCore | undefined;
  const close = async (): Promise<void> => {
    await remote?.shutdown('bench over').catch(() => undefined);
    if (serve) await killHard(serve);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const env = await setupEngineWorkspace(dir, stack.model.url, stack.engine);
    const configFile = join(dir, '.legion', 'config.yaml');
    writeFileSync(configFile, readFileSync(configFile, 'utf8').replace(/engine: .*\n/, 'engine: { kind: in-process }\n'));
    let log = '';
    const started = spawnLegion(dir, { ...env, ...extraEnv }, ['serve'], entry);
    serve = started;
    started.stderr!.on('data', (d: Buffer) => { log += d.toString(); });
    await until(() => log.includes('serving run') || started.exitCode !== null, 'legion serve (in-process) listening', 60_000);
    if (started.exitCode !== null) throw new Error(`legion serve exited (${started.exitCode}): ${log}`);
    const info = JSON.parse(readFileSync(join(dir, '.legion', 'serve.json'), 'utf8')) as { socket: string };
    remote = (await attachRemote({ socket: info.socket, client: 'bench' })).core;
    return { serve: started, remote, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export async function streamFigures(dir: string, options: { chunks: number; delayMs: number; sessions: number; warmRounds: number; measuredRounds: number }): Promise<StreamFigures> {
  const stack = await startEngineStack(dir, { answerChunks: options.chunks, delayMs: options.delayMs, entry: BUILT });
  let local: Awaited<ReturnType<typeof startInProcessSide>> | undefined;
  try {
    const remote = await stack.attach('bench');
    local = await startInProcessSide(stack);
    await round(remote, ['default'], 'warm up');
    const lags = [...await latencies(stack, remote, 'latency 1'), ...await latencies(stack, remote, 'latency 2')];
    await round(local.remote, ['default'], 'warm up in-process');
    const localLags = [...await latencies(stack, local.remote, 'latency in-process 1'), ...await latencies(stack, local.remote, 'latency in-process 2')];
    const names = Array.from({ length: options.sessions }, (_, i) => `s${i}`);
    for (let i = 0; i < options.warmRounds; i++) {
      await round(remote, names, `warm up ${i}`);
      await round(local.remote, names, `warm up in-process ${i}`);
    }
    const pids = { hub: stack.serve.pid!, worker: stack.worker.child.pid!, server: stack.engine.pid };
    const engineRounds: { hub: number; worker: number; server: number }[] = [];
    const localRounds: number[] = [];
    // The two sides alternate round by round: a change in the machine's load falls on both.
    for (let i = 0; i < options.measuredRounds; i++) {
      const before = { hub: cpuOf(pids.hub), worker: cpuOf(pids.worker), server: cpuOf(pids.server) };
      const deltas = await round(remote, names, `measured ${i}`);
      engineRounds.push({
        hub: (cpuOf(pids.hub) - before.hub) / deltas,
        worker: (cpuOf(pids.worker) - before.worker) / deltas,
        server: (cpuOf(pids.server) - before.server) / deltas,
      });
      const serve0 = cpuOf(local.serve.pid!);
      const localDeltas = await round(local.remote, names, `measured in-process ${i}`);
      localRounds.push((cpuOf(local.serve.pid!) - serve0) / localDeltas);
    }
    const total = (r: { hub: number; worker: number; server: number }): number => r.hub + r.worker + r.server;
    const engineParts = medianBy(engineRounds, total);
    const inProcessCpuPerDeltaMs = medianBy(localRounds, (r) => r);
    return {
      latencyP95Ms: percentile(lags, 95),
      latencyP50Ms: percentile(lags, 50),
      inProcessLatencyP50Ms: percentile(localLags, 50),
      inProcessLatencyP95Ms: percentile(localLags, 95),
      engineCpuPerDeltaMs: total(engineParts),
      inProcessCpuPerDeltaMs,
      engineParts,
      engineRoundsMs: engineRounds.map(total),
      inProcessRoundsMs: localRounds,
      ratio: medianBy(engineRounds.map((r, i) => total(r) / localRounds[i]!), (r) => r),
    };
  } finally {
    await local?.close();
    await stack.close();
  }
}
