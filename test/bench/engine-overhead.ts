/**
 * engine (overhead part, docs/engine.md#performance): the wall time of one turn (a message, one
 * model call answering with one `shell` call allowed by a rule, the tool run, one model call with
 * the final text; a local fake model, no delay) with the core in this process, and the same turn
 * driven by a hub in this process through a real restate-server to one `legion worker` (a child
 * process, the built bundle `dist/legion.js` as users run it, not the sources through tsx). Each side has its own workspace and its own app, opened once; their turns alternate
 * (in-process, engine, in-process, …) so both see the same load; the first turn of each is left
 * out (it compiles its path); medians.
 * `settingsB` (LEGION_BENCH_RESTATE_SETTINGS_B in engine.ts): a third side, the same turn through
 * a second engine with those config lines, alternating with the other two: a knob measured
 * against the default turn by turn. `workerRootB` (LEGION_BENCH_WORKER_ROOT_B): side B's worker runs from
 * that checkout (its built dist/legion.js: build it first), on an engine like side A's unless `settingsB`: a change to the
 * worker measured against the code before it, turn by turn.
 * CPU per turn (`cpu`): each side's turn also measured in CPU time (schedstat, every thread), by
 * process — this one (the hub, or the core in-process; the fake model on both sides), the worker,
 * restate-server — read around each turn, the other processes before this one's start and after
 * its end so the reads fall outside it; medians. The tool's shell is a child and on neither side.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile, processCpuMs } from './harness';
import { composeApp, type AppSession } from '../../src/cli/compose';
import type { CommandContext } from '../../src/cli/command';
import { freePort, type LocalEngine } from '../../src/engine/local-engine';
import { APP_DIR } from '../helpers/crash-workspace';
import { BUILT, killHard, setupEngineWorkspace, startEngine, startFakeModel, startWorker, type WorkerProcess } from '../helpers/engine-fixture';

function contextFor(dir: string, env: Record<string, string>): CommandContext {
  return {
    args: { command: 'run', positionals: [], flags: new Map(), global: { help: false, version: false, plain: false } },
    io: { stdout: () => undefined, stderr: () => undefined, env, cwd: dir, isTTY: false },
    appDir: APP_DIR,
    workspaceRoot: dir,
  };
}

interface Side {
  readonly name: string;
  readonly dir: string;
  app?: AppSession;
  engine?: LocalEngine;
  worker?: WorkerProcess;
  readonly samples: number[];
  readonly cpu: TurnCpu[];
}

/** CPU of one turn by process (ms): this process, the worker, restate-server (0 in-process). */
export interface TurnCpu {
  readonly self: number;
  readonly worker: number;
  readonly server: number;
}

const cpuOf = (pid: number | undefined): number => {
  if (pid === undefined) return 0;
  const cpu = processCpuMs(pid);
  if (!cpu) throw new Error(`process ${pid} is gone`);
  return cpu.precise ?? cpu.ticks;
};

async function measuredTurn(side: Side, i: number): Promise<{ ms: number; cpu: TurnCpu }> {
  const pids = { worker: side.worker?.child.pid, server: side.engine?.pid };
  const worker0 = cpuOf(pids.worker), server0 = cpuOf(pids.server), self0 = cpuOf(process.pid);
  const ms = await oneTurn(side.app!, i);
  const self = cpuOf(process.pid) - self0;
  return { ms, cpu: { self, worker: cpuOf(pids.worker) - worker0, server: cpuOf(pids.server) - server0 } };
}

async function oneTurn(app: AppSession, i: number): Promise<number> {
  const start = performance.now();
  const sent = app.core.send('builder', `turn ${i}`);
  if (!sent.ok) throw new Error(sent.error);
  await app.core.idle(sent.sessionId);
  const outcome = app.core.lastOutcome(sent.sessionId);
  if (outcome?.kind !== 'done') throw new Error(`turn ${i}: ${JSON.stringify(outcome)}`);
  return performance.now() - start;
}

export interface OverheadFigures {
  readonly inProcessMs: number;
  readonly engineMs: number;
  readonly engineP95Ms: number;
  /** With `settingsB`: the median turn through the second engine. */
  readonly engineBMs?: number;
  /** Median CPU of a turn by process, per side (ms). */
  readonly cpu: Readonly<Record<string, TurnCpu & { total: number }>>;
}

function medianCpu(samples: readonly TurnCpu[]): TurnCpu & { total: number } {
  const of = (pick: (c: TurnCpu) => number): number => percentile(samples.map(pick), 50);
  return { self: of((c) => c.self), worker: of((c) => c.worker), server: of((c) => c.server), total: of((c) => c.self + c.worker + c.server) };
}

/**
 * `turns` turns a side, alternating. `settings`: lines added to the engine's config (as
 * startLocalEngine takes them); `timing`: the worker prints its phases (LEGION_ENGINE_TIMING=1)
 * to this process's stderr at the end.
 */
export async function overheadFigures(options: { turns: number; settings: readonly string[]; settingsB?: readonly string[]; workerRootB?: string; timing: boolean }): Promise<OverheadFigures> {
  const model = await startFakeModel({ answerChunks: 5, delayMs: 0 });
  const sides: Side[] = ['in-process', 'engine', ...(options.settingsB || options.workerRootB ? ['engine B'] : [])]
    .map((name): Side => ({ name, dir: mkdtempSync(join(tmpdir(), 'legion-bench-engine-')), samples: [], cpu: [] }));
  try {
    for (const side of sides) {
      const engine = await startEngine(side.dir, side.name === 'engine B' ? options.settingsB ?? options.settings : options.settings);
      const env = await setupEngineWorkspace(side.dir, model.url, engine);
      if (side.name === 'in-process') {
        process.kill(-engine.pid, 'SIGKILL');
        const config = readFileSync(join(side.dir, '.legion', 'config.yaml'), 'utf8');
        await writeFile(join(side.dir, '.legion', 'config.yaml'), config.replace(/engine: .*\n/, 'engine: { kind: in-process }\n'));
      } else {
        side.engine = engine;
        const entry = side.name === 'engine B' && options.workerRootB ? { kind: 'bundle' as const, root: options.workerRootB } : BUILT;
        side.worker = await startWorker(side.dir, { ...env, ...(options.timing ? { LEGION_ENGINE_TIMING: '1' } : {}) }, await freePort(), [], entry);
      }
      side.app = await composeApp(contextFor(side.dir, env), { newRun: true, headless: { approve: 'deny' } });
    }
    for (let i = 0; i <= options.turns; i++) {
      for (const side of sides) {
        const { ms, cpu } = await measuredTurn(side, i);
        if (i > 0) {
          side.samples.push(ms);
          side.cpu.push(cpu);
        }
      }
    }
    const median = (name: string) => percentile(sides.find((s) => s.name === name)!.samples, 50);
    return {
      inProcessMs: median('in-process'),
      engineMs: median('engine'),
      engineP95Ms: percentile(sides[1]!.samples, 95),
      ...(options.settingsB || options.workerRootB ? { engineBMs: median('engine B') } : {}),
      cpu: Object.fromEntries(sides.map((s) => [s.name, medianCpu(s.cpu)])),
    };
  } finally {
    for (const side of sides) {
      await side.app?.close('bench over').catch(() => undefined);
      if (side.worker) {
        await killHard(side.worker.child);
        if (options.timing) process.stderr.write(`${side.name}:\n${side.worker.log.join('')}`);
      }
      if (side.engine) try { process.kill(-side.engine.pid, 'SIGKILL'); } catch { /* gone */ }
      rmSync(side.dir, { recursive: true, force: true });
    }
    await model.close();
  }
}
