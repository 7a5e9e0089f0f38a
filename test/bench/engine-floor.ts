/**
 * engine (floor part, docs/engine.md#performance): what the engine itself takes per turn with
 * the durability Legion requires, Legion's code left out. restate-server started as `legion
 * engine up` starts it (startLocalEngine: the same config, fsync on), a minimal virtual object
 * served as `legion worker` serves (engine-floor-worker.ts: the same SDK, HTTP/2, the object's
 * options), and the ingress round trip of one invocation from this process (node:http kept
 * alive, as the hub posts a turn): the handler running 0 `ctx.run` steps, and 4 (a turn of one
 * tool: `model 1`, `tool-start`, `tool`, `model 2`). Interleaved (0, 4, 0, 4 …) on one key, as
 * a session's turns are, after a warm-up; medians. Reported, not judged: Legion's overhead
 * budget is measured over this.
 * `LEGION_BENCH_RESTATE_SETTINGS`: more lines of the engine's TOML config (`;`-separated dotted
 * keys), to measure a knob against the default (docs/engine.md#performance).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { percentile, processCpuMs } from './harness';
import { startLocalEngine, type LocalEngine } from '../../src/engine/local-engine';
import { registerDeployment } from '../../src/engine/admin';
import { requestText } from '../../src/engine/http-text';
import { REPO_ROOT } from '../helpers/bundle';

/** The floor's object (engine-floor-worker.ts registers it under the name it is given). */
const FLOOR_OBJECT = 'LegionFloor';

export interface FloorFigures {
  /** Ingress round trip of an invocation whose handler runs no step (median, ms). */
  readonly invocationMs: number;
  /** … with 4 no-op `ctx.run` steps (median, ms). */
  readonly fourStepsMs: number;
  /** (fourStepsMs − invocationMs) / 4: one step journaled and acknowledged. */
  readonly perStepMs: number;
  readonly invocationP95Ms: number;
  readonly fourStepsP95Ms: number;
  /** CPU of restate-server and of the worker during an invocation with 4 steps (ms, mean). */
  readonly serverCpuMs: number;
  readonly workerCpuMs: number;
}

const cpuOf = (pid: number): number => {
  const cpu = processCpuMs(pid);
  if (!cpu) throw new Error(`process ${pid} is gone`);
  return cpu.precise ?? cpu.ticks;
};

function startFloorWorker(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'test', 'bench', 'engine-floor-worker.ts'), FLOOR_OBJECT], {
    cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve({ child, url: out.trim() });
    });
    child.once('exit', (code) => reject(new Error(`the floor worker exited (${code})`)));
  });
}

async function invoke(ingress: string, key: string, steps: number): Promise<number> {
  const start = performance.now();
  const { status, text } = await requestText(`${ingress}/${FLOOR_OBJECT}/${key}/turn`, { method: 'POST', body: String(steps) }, 30_000);
  const ms = performance.now() - start;
  if (status !== 200 || Number(text) !== steps) throw new Error(`floor invocation: HTTP ${status} ${text.slice(0, 200)}`);
  return ms;
}

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.LEGION_BENCH_RESTATE_SETTINGS ?? '').split(';').map((s) => s.trim()).filter(Boolean);
}

/** The floor figures from `rounds` interleaved pairs (after 20 pairs of warm-up). */
export async function floorFigures(dir: string, options: { rounds: number; settings?: readonly string[] }): Promise<FloorFigures> {
  mkdirSync(join(dir, 'engine-data'), { recursive: true });
  let engine: LocalEngine | undefined;
  let worker: { child: ChildProcess; url: string } | undefined;
  try {
    engine = await startLocalEngine({ dataDir: join(dir, 'engine-data'), logFile: join(dir, 'engine.log'), env: process.env, settings: options.settings ?? [] });
    worker = await startFloorWorker();
    const registered = await registerDeployment(engine.admin, worker.url);
    if (!registered.ok) throw new Error(registered.error);
    const key = 'session-user__floor__default';
    for (let i = 0; i < 20; i++) {
      await invoke(engine.ingress, key, 0);
      await invoke(engine.ingress, key, 4);
    }
    const zero: number[] = [];
    const four: number[] = [];
    const pids = { server: engine.pid, worker: worker.child.pid! };
    const cpu = { zero: { server: 0, worker: 0 }, four: { server: 0, worker: 0 } };
    for (let i = 0; i < options.rounds; i++) {
      for (const [steps, samples, into] of [[0, zero, cpu.zero], [4, four, cpu.four]] as const) {
        const before = { server: cpuOf(pids.server), worker: cpuOf(pids.worker) };
        samples.push(await invoke(engine.ingress, key, steps));
        into.server += cpuOf(pids.server) - before.server;
        into.worker += cpuOf(pids.worker) - before.worker;
      }
    }
    const invocationMs = percentile(zero, 50);
    const fourStepsMs = percentile(four, 50);
    return {
      invocationMs, fourStepsMs, perStepMs: (fourStepsMs - invocationMs) / 4,
      invocationP95Ms: percentile(zero, 95), fourStepsP95Ms: percentile(four, 95),
      serverCpuMs: cpu.four.server / options.rounds, workerCpuMs: cpu.four.worker / options.rounds,
    };
  } finally {
    if (worker) worker.child.kill('SIGKILL');
    if (engine) try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
  }
}
