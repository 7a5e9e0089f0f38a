/**
 * day: a simulated working day without a restart (docs/performance.md#the-day-bench).
 *
 * A real `legion serve` (the built bundle) against a local model (test/bench/day-model.ts, the
 * real Anthropic SDK over HTTP, its own process) on a 32k-token window: 8 agents, 12 sessions
 * running in parallel, every turn a `file_read` of a 2–8 kB file or a `file_write` of 2–8 kB
 * (so every session compacts many times). Over the socket: a scripted front end sends the turns
 * and decides every approval (writes ask the user; one in ten is rejected), and an attached
 * App (the TUI's code on a fake terminal, in this process) receives every event for the whole
 * day. The real TUI is attached in tmux for the whole day; two `legion run` clients attach,
 * send a turn and leave at 30% and 60% of the day (while the lanes wait at those marks).
 *
 * Checks (`relative` ones also run in `npm test`, test/e2e/day-soak.test.ts, on 300 turns):
 * - every turn ended with its answer (`DONE <tag>`), no "prompt is too long" left unrecovered;
 * - the largest request ≤ the window, p95 ≤ 0.75 of it;
 * - serve's RSS at the end ≤ 1.25× its RSS after the first 10% of turns, both idle (the lanes
 *   wait at every tenth until no turn runs) and after a full GC (a `--require`d preload answers SIGUSR2
 *   with `gc()` and the memory figures: nothing in the app), the lower of two readings;
 * - serve's CPU per turn does not grow: the day is read in tenths, each from an idle point to an
 *   idle point (the lanes wait until no turn runs), serve's CPU net of the bench's forced GCs;
 *   the trend through the tenths after the first compaction (histories grow until then, so the
 *   first turns are lighter by design) ends ≤ 1.2× where it starts (test/bench/day-growth.ts);
 * - `.legion/` grows linearly: bytes per turn over the second half ≤ 1.25× the first half's;
 * absolute ones (the full day only): > 3,000 messages across the attached App's sessions and
 * its keystroke → frame p95 ≤ 16 ms at the end; idle CPU of serve and of the tmux TUI after
 * the day ≤ 20 ms per 5 s.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { testUserDir } from '../helpers/trust';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { BenchOptions } from './harness';
import { BUNDLE, appEnv, hasTmux, legionCommand, openTmux, percentile, processCpuMs, sleep, stopPaneProcess, waitForScreen, type TmuxPane } from './harness';
import { keystrokeFigures } from './keystrokes';
import { dayFileText, daySize } from './day-model';
import { CPU_GROWTH_LIMIT, cpuGrowth, type DayWindow } from './day-growth';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const KEY = 'sk-ant-day-bench-0123456789';

export interface DayPlan {
  readonly turns: number;
  readonly sessions?: number;
  readonly agents?: number;
  readonly window?: number;
  /**
   * Turns per session before the day's clock starts (default 2), in none of the figures: the
   * server warm, as a server that lives long is (its first turns compile its code; measured
   * cold, a 300-turn day's first 10% holds little else).
   */
  readonly warmupPerSession?: number;
  /** Keystrokes typed into the attached App at the end (0: none measured). */
  readonly keystrokes?: number;
  /** Measure idle CPU after the day (10 s). */
  readonly idle?: boolean;
  /** The real TUI in tmux for the whole day (skipped without tmux). */
  readonly tmuxTui?: boolean;
  readonly log?: (line: string) => void;
}

export interface DayCheck {
  readonly name: string;
  readonly value: number;
  readonly limit: number;
  readonly direction: 'lower' | 'higher';
  /** Absolute (a machine-dependent figure): judged on the full day only. */
  readonly absolute: boolean;
  readonly pass: boolean;
}

export interface DayResult { readonly figures: Record<string, number>; readonly checks: DayCheck[]; readonly notes: string[] }

interface ModelServer { readonly url: string; stats(): Promise<{ requests: number; summaries: number; overflows: number; sizes: number[] }>; stop(): void }

async function startModel(window: number): Promise<ModelServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(HERE, 'day-model.ts'), JSON.stringify({ window })], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((ok, fail) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      if (buffer.includes('\n')) ok((JSON.parse(buffer.split('\n')[0]!) as { port: number }).port);
    });
    child.once('exit', (code) => fail(new Error(`the day model exited (${code})`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    stats: async () => (await (await fetch(`${url}/stats`)).json()) as Awaited<ReturnType<ModelServer['stats']>>,
    stop: () => void child.stdin!.end(),
  };
}

/** Bytes of every file under `dir` (symlinks not followed). */
function treeBytes(dir: string): number {
  let total = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      const st = lstatSync(path);
      if (st.isDirectory()) total += treeBytes(path);
      else if (st.isFile()) total += st.size;
    } catch {
      // removed meanwhile (a temp file renamed into place)
    }
  }
  return total;
}

/**
 * The preload `legion serve` runs with (`--expose-gc --require`): SIGUSR2 → full GC → memory and
 * the CPU every forced GC took so far (the bench's own work, taken out of serve's CPU figures)
 * written to LEGION_DAY_GC_FILE. To find what grows: with LEGION_DAY_HEAPSNAPSHOTS=<dir>, a heap
 * snapshot there at every forced GC; with LEGION_DAY_CPU_PROF=<dir>, serve runs with
 * `--cpu-prof` into it and the preload appends each forced GC's time (µs, the profile's clock)
 * to marks.txt there, so the profile can be cut into the day's tenths.
 */
const GC_PRELOAD = `let forcedCpuMs = 0;
process.on('SIGUSR2', () => {
  const c0 = process.cpuUsage();
  global.gc(); global.gc();
  if (process.env.LEGION_DAY_HEAPSNAPSHOTS) require('v8').writeHeapSnapshot(require('path').join(process.env.LEGION_DAY_HEAPSNAPSHOTS, 'serve-' + Date.now() + '.heapsnapshot'));
  const c = process.cpuUsage(c0);
  if (process.env.LEGION_DAY_CPU_PROF) require('fs').appendFileSync(require('path').join(process.env.LEGION_DAY_CPU_PROF, 'marks.txt'), String(process.hrtime.bigint() / 1000n) + '\\n');
  forcedCpuMs += (c.user + c.system) / 1000;
  require('fs').writeFileSync(process.env.LEGION_DAY_GC_FILE + '.tmp', JSON.stringify({ ...process.memoryUsage(), forcedCpuMs }));
  require('fs').renameSync(process.env.LEGION_DAY_GC_FILE + '.tmp', process.env.LEGION_DAY_GC_FILE);
});
`;

/** Memory of `legion serve` after a full GC, MB. */
interface Memory { readonly rss: number; readonly heapUsed: number; readonly external: number }
interface Serve {
  readonly child: ChildProcess;
  readonly socket: string;
  /** One forced GC at a time (calls wait for the one before). */
  memoryAfterGc(): Promise<Memory>;
  /** Serve's CPU (ms) less what the bench's forced GCs took: read between forced GCs, never during one. */
  netCpuMs(): Promise<number>;
  stop(): Promise<void>;
}

async function startServe(dir: string, env: NodeJS.ProcessEnv, scratch: string): Promise<Serve> {
  const preload = join(scratch, 'gc-preload.cjs');
  writeFileSync(preload, GC_PRELOAD);
  const gcFile = join(scratch, 'gc-rss');
  const profile = process.env.LEGION_DAY_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.LEGION_DAY_CPU_PROF] : [];
  const child = spawn(process.execPath, ['--expose-gc', ...profile, '--require', preload, BUNDLE, 'serve'], {
    cwd: dir, env: { ...env, LEGION_DAY_GC_FILE: gcFile }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => { log += d.toString('utf8'); if (log.length > 100_000) log = log.slice(-50_000); });
  const deadline = Date.now() + 60_000;
  while (!/serving run/.test(log)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`legion serve did not start: ${log}`);
    await sleep(50);
  }
  const exited = new Promise((r) => child.once('exit', r));
  let forcedCpuMs = 0;
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(f: () => Promise<T>): Promise<T> => {
    const p = queue.then(f);
    queue = p.catch(() => undefined);
    return p;
  };
  return {
    child,
    socket: join(dir, '.legion', 'serve.sock'),
    memoryAfterGc: () => serial(async () => {
      rmSync(gcFile, { force: true });
      child.kill('SIGUSR2');
      const end = Date.now() + 30_000;
      while (!existsSync(gcFile)) {
        if (Date.now() > end) throw new Error('legion serve did not answer the forced GC');
        await sleep(20);
      }
      const m = JSON.parse(readFileSync(gcFile, 'utf8')) as { rss: number; heapUsed: number; external: number; forcedCpuMs: number };
      forcedCpuMs = m.forcedCpuMs;
      return { rss: m.rss / 1048576, heapUsed: m.heapUsed / 1048576, external: m.external / 1048576 };
    }),
    netCpuMs: () => serial(async () => cpuOf(child.pid!) - forcedCpuMs),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

const cpuOf = (pid: number): number => {
  const c = processCpuMs(pid);
  if (!c) throw new Error(`process ${pid} is gone`);
  return c.precise ?? c.ticks;
};

/** CPU (ms) `pid` used over `ms` of wall time. */
async function cpuOver(pid: number, ms: number): Promise<number> {
  const c0 = cpuOf(pid);
  await sleep(ms);
  return cpuOf(pid) - c0;
}

/** `legion run --attach` one turn; resolves with its exit code and output. */
function legionRun(dir: string, env: NodeJS.ProcessEnv, text: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    const child = spawn(process.execPath, [BUNDLE, 'run', '--attach', text], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => { stdout += d.toString('utf8'); });
    child.stderr!.on('data', (d: Buffer) => { stderr += d.toString('utf8'); });
    child.once('exit', (code) => ok({ code, stdout, stderr }));
  });
}

async function prepare(dir: string, agents: number, window: number): Promise<void> {
  const { initWorkspace } = await import('../../src/collective/init');
  const { createParticipantStore } = await import('../../src/collective/store');
  const { agentSchema } = await import('../../src/collective/participant');
  const { layoutFor } = await import('../../src/storage/layout');
  await initWorkspace({ appDir: ROOT, workspaceRoot: dir, userDir: testUserDir(dir) });
  const store = createParticipantStore(layoutFor(dir));
  for (let i = 1; i <= agents; i++) {
    await store.save(agentSchema().parse({ id: `a${i}`, kind: 'agent', name: `agent ${i}`, systemPrompt: `You are agent ${i}: you keep the team's notes.`, tools: ['file_read', 'file_write'] }));
  }
  writeFileSync(join(dir, '.legion', 'models.yaml'), `version: 1\nmodels:\n  day-model: { input: 0, output: 0, contextWindow: ${window} }\n`);
  writeFileSync(join(dir, '.legion', 'config.yaml'), `context:\n  defaultWindow: ${window}\n`, { mode: 0o600 });
  mkdirSync(join(dir, 'seed'), { recursive: true });
  mkdirSync(join(dir, 'notes'), { recursive: true });
  for (let i = 0; i < 16; i++) writeFileSync(join(dir, 'seed', `file-${i}.txt`), dayFileText(1000 + i, daySize(1000 + i)));
}

export async function runDay(plan: DayPlan): Promise<DayResult> {
  const turns = plan.turns;
  const sessions = plan.sessions ?? 12;
  const agents = plan.agents ?? 8;
  const window = plan.window ?? 32_000;
  const log = plan.log ?? (() => undefined);
  const notes: string[] = [];
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: build first (npm run bench builds)`);
  // Production React and Ink not in CI mode (it skips frames), before either loads.
  process.env.NODE_ENV = 'production';
  delete process.env.CI;

  const scratch = mkdtempSync(join(tmpdir(), 'legion-day-'));
  const dir = join(scratch, 'ws');
  mkdirSync(dir);
  await prepare(dir, agents, window);
  const model = await startModel(window);
  const env: NodeJS.ProcessEnv = { ...appEnv(), HOME: dir, ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: model.url, LEGION_MODEL: 'day-model', LEGION_CACHE_DIR: join(scratch, 'cache') };
  delete env.LEGION_TEST;
  let serve: Serve | undefined;
  let pane: TmuxPane | undefined;
  const cleanups: Array<() => unknown> = [];
  try {
    serve = await startServe(dir, env, scratch);
    const serverPid = serve.child.pid!;
    const { attachRemote } = await import('../../src/serve/remote-core');

    // The real TUI, attached in tmux for the whole day.
    if (plan.tmuxTui !== false && hasTmux()) {
      pane = openTmux({ width: 160, height: 48, env, cwd: dir });
      pane.respawn(legionCommand([]));
      const first = await waitForScreen(pane, (s) => /attached/.test(s), { since: performance.now(), timeoutMs: 60_000, pollMs: 50 });
      if (!first.ok) throw new Error(`the TUI did not attach: ${first.reason}\n${first.screen}`);
    } else notes.push('tmux TUI skipped (no tmux)');

    // The attached App (the TUI's code, fake terminal) in this process, mounted all day.
    const viewer = (await attachRemote({ socket: serve.socket, client: 'tui' })).core;
    cleanups.push(() => viewer.shutdown('day over'));
    const { mountBenchApp } = await import('../helpers/tui-bench');
    const app = mountBenchApp(viewer, { columns: 160, rows: 48, maxLanes: 4 });
    cleanups.push(() => app.unmount());

    // The scripted front end: sends the turns, decides every approval.
    const driver = (await attachRemote({ socket: serve.socket, client: 'day-driver' })).core;
    cleanups.push(() => driver.shutdown('day over'));
    let approvals = 0;
    let rejections = 0;
    driver.bus.subscribe('approval-request', (event) => {
      if (event.approverId !== 'user') return;
      const n = Number(/notes\/t(\d+)\.md/.exec(JSON.stringify(event.input))?.[1] ?? 0);
      const decision = n % 10 === 4 ? 'rejected' : 'approved';
      setImmediate(() => {
        const r = driver.resolveApprovals([event.requestId], decision, { reason: 'the day bench decides' });
        if (!r.ok) notes.push(`approval ${event.requestId}: ${r.error}`);
        else if (decision === 'rejected') rejections += 1;
        else approvals += 1;
      });
    });
    let errorsSeen = 0;
    driver.bus.subscribe('agent-status', (event) => { if (event.status === 'error') errorsSeen += 1; });

    const send = async (agent: string, name: string, tag: string, n: number): Promise<string | null> => {
      const sent = driver.send(agent, `[${tag}] ${n % 2 === 0 ? 'write' : 'read'} the notes for item ${n}`, name);
      if (!sent.ok) throw new Error(`send ${tag}: ${sent.error}`);
      const answer = await driver.idle(sent.sessionId);
      return answer.startsWith(`DONE ${tag}`) ? null : `${tag} in ${name}: ended with ${JSON.stringify(answer.slice(0, 200))}`;
    };
    const agentOf = (s: number): string => `a${(s % agents) + 1}`;
    const warmup = plan.warmupPerSession ?? 2;
    const warmFailures = (await Promise.all(Array.from({ length: sessions }, async (_, s) => {
      const out: string[] = [];
      for (let k = 0; k < warmup; k++) {
        const failed = await send(agentOf(s), `day-${s}`, `w${s * warmup + k}`, s * warmup + k);
        if (failed) out.push(failed);
      }
      return out;
    }))).flat();

    const legionDir = join(dir, '.legion');
    // The day in tenths, each from an idle point to an idle point: once the turns of a tenth are
    // started the lanes wait (`gate`) until no turn runs, then serve's CPU (net of the bench's
    // forced GCs), the model's summaries so far, memory after a full GC and `.legion/`'s bytes
    // are read. Every window is thus measured the same way: the whole work of exactly its tenth
    // of the turns (the same mix of reads, writes and rejections in each). Memory is compared
    // idle to idle (the lower of two readings after 10% and at the end, each after a full GC).
    // The two `legion run` clients attach, take a turn and leave at the 30% and 60% marks while
    // the lanes wait: their work (a snapshot of every history to each) is in no tenth.
    const idleRss = async (): Promise<number> => Math.min((await serve!.memoryAfterGc()).rss, (await serve!.memoryAfterGc()).rss);
    /** `cpuMs` ends the tenth before the mark, `resumeCpuMs` starts the next (later when a client ran between). */
    interface Mark { readonly turns: number; readonly cpuMs: number; resumeCpuMs: number; readonly summaries: number; readonly bytes: number; readonly memory: Memory }
    const markNow = async (turnsDone: number): Promise<Mark> => {
      const cpuMs = await serve!.netCpuMs();
      const { summaries } = await model.stats();
      return { turns: turnsDone, cpuMs, resumeCpuMs: cpuMs, summaries, bytes: treeBytes(legionDir), memory: await serve!.memoryAfterGc() };
    };
    const clientAtMark = new Map([[3, 'tR1'], [6, 'tR3']]);
    const marks: Mark[] = [await markNow(0)];
    let rssTenth = NaN;
    const t0 = performance.now();
    let next = 0;
    let done = 0;
    let inFlight = 0;
    let gate: Promise<void> | null = null;
    const failures: string[] = [...warmFailures];
    const boundary = (k: number): number => Math.ceil((turns * k) / 10);
    const mark = async (): Promise<void> => {
      while (inFlight > 0) await sleep(5);
      log(`day: ${done}/${turns} turns, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      const m = await markNow(done);
      marks.push(m);
      if (marks.length === 2) rssTenth = await idleRss();
      const tag = clientAtMark.get(marks.length - 1);
      if (tag) {
        const r = await legionRun(dir, env, `[${tag}] read the seed file and tell me what it holds`);
        if (r.code !== 0 || !r.stdout.includes(`DONE ${tag}`)) failures.push(`legion run ${tag}: exit ${r.code}: ${r.stdout.slice(-200)} ${r.stderr.slice(-300)}`);
        m.resumeCpuMs = await serve!.netCpuMs();
      }
      gate = null;
    };
    const lane = async (s: number): Promise<void> => {
      for (;;) {
        while (gate) await gate;
        if (next >= turns) return;
        if (next >= boundary(marks.length)) {
          gate ??= mark();
          continue;
        }
        const n = next++;
        inFlight += 1;
        const failed = await send(agentOf(s), `day-${s}`, `t${n}`, n);
        inFlight -= 1;
        if (failed) failures.push(failed);
        done += 1;
      }
    };
    const dayStart = performance.now();
    await Promise.all(Array.from({ length: sessions }, (_, s) => lane(s)));
    const dayMs = performance.now() - dayStart;
    marks.push(await markNow(done));
    const rssEnd = await idleRss();
    const bytesEnd = treeBytes(legionDir);
    const windows: DayWindow[] = marks.slice(1).map((m, i) => ({ fromTurn: marks[i]!.turns, toTurn: m.turns, cpuMs: m.cpuMs - marks[i]!.resumeCpuMs, summariesBefore: marks[i]!.summaries }));
    const growth = cpuGrowth(windows);
    const half = marks[Math.min(5, marks.length - 1)]!;
    const tenth = marks[Math.min(1, marks.length - 1)]!;

    const stats = await model.stats();
    const compactions = stats.summaries;
    let messages = 0;
    for (const s of viewer.sessions()) messages += viewer.history(s.id).length;

    // The end of the day: keystroke → frame in the attached App, then idle CPU.
    let keys = { keyToFrameP95Ms: NaN, keyToFrameMedianMs: NaN, keystrokes: 0, lostKeystrokes: 0 };
    if ((plan.keystrokes ?? 0) > 0) {
      await sleep(500);
      const latencies: number[] = [];
      let typed = 0;
      for (let i = 0; i < plan.keystrokes!; i++) {
        typed += 1;
        const want = 'q'.repeat(typed);
        latencies.push(await app.keyToFrame('q', (chunk) => chunk.includes(want) && !chunk.includes(`${want}q`)).catch(() => NaN));
        if (typed >= 30) { typed = 0; app.stdin.send('\x15'); await sleep(50); }
        await sleep(40 + (i % 7) * 5);
      }
      keys = keystrokeFigures(latencies);
    }
    let serverIdle = NaN;
    let tuiIdle = NaN;
    if (plan.idle) {
      app.unmount(); // the in-process App is not what is measured idle
      await sleep(2_000);
      const tuiPid = pane?.pid() ?? null;
      const [s, t] = await Promise.all([cpuOver(serverPid, 5_000), tuiPid ? cpuOver(tuiPid, 5_000) : Promise.resolve(NaN)]);
      serverIdle = s;
      tuiIdle = t;
    }
    if (pane && pane.dead()) failures.push(`the tmux TUI exited during the day:\n${pane.capture()}`);

    const sizes = stats.sizes;
    const bytesFirstHalf = (half.bytes - tenth.bytes) / (half.turns - tenth.turns);
    const bytesSecondHalf = (bytesEnd - half.bytes) / (done - half.turns);
    for (const f of failures.slice(0, 10)) notes.push(f);
    if (failures.length > 10) notes.push(`… ${failures.length - 10} more failures`);
    const figures: Record<string, number> = {
      turns: done,
      wallS: dayMs / 1000,
      notDone: failures.length,
      agentErrors: errorsSeen,
      overflows: stats.overflows,
      compactions,
      approvals,
      rejections,
      maxRequestShare: Math.max(...sizes) / window,
      p95RequestShare: percentile(sizes, 95) / window,
      rssTenthMb: rssTenth,
      rssEndMb: rssEnd,
      rssGrowth: rssEnd / rssTenth,
      heapTenthMb: tenth.memory.heapUsed,
      heapEndMb: marks.at(-1)!.memory.heapUsed,
      cpuPerTurnFirstMs: growth.firstMs,
      cpuPerTurnLastMs: growth.lastMs,
      cpuPerTurnRatio: growth.ratio,
      cpuSteadyFromTurn: growth.steadyFrom < 0 ? NaN : windows[growth.steadyFrom]!.fromTurn,
      legionBytesPerTurn: (bytesEnd - tenth.bytes) / (done - tenth.turns),
      legionGrowthRatio: bytesSecondHalf / bytesFirstHalf,
      legionMb: bytesEnd / (1024 * 1024),
      messages,
      keyToFrameP95Ms: keys.keyToFrameP95Ms,
      keyToFrameMedianMs: keys.keyToFrameMedianMs,
      lostKeystrokes: keys.lostKeystrokes,
      serverIdleCpuMs5s: serverIdle,
      tuiIdleCpuMs5s: tuiIdle,
    };
    const check = (name: string, value: number, limit: number, direction: 'lower' | 'higher', absolute: boolean): DayCheck =>
      ({ name, value, limit, direction, absolute, pass: Number.isFinite(value) && (direction === 'lower' ? value <= limit : value >= limit) });
    const checks: DayCheck[] = [
      check('turns ended done (missing)', failures.length + (turns - done), 0, 'lower', false),
      check('turns that ended in an agent error', errorsSeen, 0, 'lower', false),
      check('"prompt is too long" refusals', stats.overflows, 0, 'lower', false),
      check('largest request ÷ window', figures.maxRequestShare!, 1, 'lower', false),
      check('p95 request ÷ window', figures.p95RequestShare!, 0.75, 'lower', false),
      check('serve RSS end ÷ after 10% (after a full GC)', figures.rssGrowth!, 1.25, 'lower', false),
      check('serve CPU per turn, steady-state trend: last tenth ÷ first steady tenth', figures.cpuPerTurnRatio!, CPU_GROWTH_LIMIT, 'lower', false),
      check('.legion/ bytes per turn, second half ÷ first half', figures.legionGrowthRatio!, 1.25, 'lower', false),
      check('messages across the attached App\'s sessions', messages, 3000, 'higher', true),
      check('attached App keystroke → frame p95 (ms)', keys.keyToFrameP95Ms, 16, 'lower', true),
      check('serve idle CPU per 5 s (ms)', serverIdle, 20, 'lower', true),
      check('tmux TUI idle CPU per 5 s (ms)', tuiIdle, 20, 'lower', true),
    ];
    notes.push(`${done} turns (after ${warmup * sessions} warm-up turns) in ${(dayMs / 1000).toFixed(0)} s on ${sessions} sessions × ${agents} agents; ${compactions} summaries; ${approvals} approved, ${rejections} rejected; .legion/ ${(bytesEnd / 1048576).toFixed(1)} MB (${figures.legionBytesPerTurn!.toFixed(0)} B/turn)`);
    notes.push(`.legion/ at the end: ${readdirSync(legionDir).map((name) => [name, treeBytes(join(legionDir, name))] as const).filter(([, b]) => b > 100_000).sort((a, b) => b[1] - a[1]).map(([name, b]) => `${name} ${(b / 1048576).toFixed(1)} MB`).join(', ')}`);
    notes.push(`serve memory after a full GC, idle, MB (turns: rss/heap/external): ${marks.map((m) => `${m.turns}: ${m.memory.rss.toFixed(0)}/${m.memory.heapUsed.toFixed(1)}/${m.memory.external.toFixed(0)}`).join(', ')}`);
    notes.push(`serve CPU per turn by tenth, ms (idle to idle, net of forced GCs; summaries before): ${windows.map((w, i) => `${growth.perTurnMs[i]!.toFixed(1)}${i === growth.steadyFrom ? ' |' : ''} (${w.summariesBefore})`).join(', ')}; steady trend ${growth.firstMs.toFixed(1)} → ${growth.lastMs.toFixed(1)} ms (${growth.ratio.toFixed(3)}×); each \`legion run\` client between tenths: ${marks.filter((m) => m.resumeCpuMs !== m.cpuMs).map((m) => `${(m.resumeCpuMs - m.cpuMs).toFixed(0)} ms`).join(', ')}`);
    return { figures, checks, notes };
  } finally {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch {
        // closing anyway
      }
    }
    if (pane) {
      await stopPaneProcess(pane);
      pane.close();
    }
    await serve?.stop();
    model.stop();
    rmSync(scratch, { recursive: true, force: true, maxRetries: 5 });
  }
}

export async function run({ smoke, note }: BenchOptions): Promise<Record<string, number>> {
  const result = await runDay({ turns: smoke ? 40 : 1500, keystrokes: smoke ? 5 : 80, idle: true, log: (l) => console.log(l) });
  for (const n of result.notes) note?.(n);
  for (const c of result.checks) note?.(`${c.pass ? '✓' : '✗'} ${c.name}: ${Number.isFinite(c.value) ? +c.value.toFixed(3) : c.value} (${c.direction === 'lower' ? '≤' : '≥'} ${c.limit}${c.absolute ? ', absolute' : ''})`);
  return result.figures;
}
