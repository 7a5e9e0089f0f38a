/**
 * serve: the cost of attaching (docs/serve.md), on the path users run — `legion serve` (the
 * built bundle, a child process) streaming from the real Anthropic SDK over HTTP to a local
 * replay server (test/helpers/stream-replay.ts, its own process), one delta per ms.
 * - latencyP95Ms: how long after the server stamped a text delta (`at`) an attached remote core
 *   (socket, zod, mirror, relay bus: what the TUI reads) delivers it; 1 lane, 2,000 deltas, no
 *   renderer in that process (its frames would be measured, not the socket).
 *   `at` has millisecond resolution, so figures are ±1 ms.
 * - cpuRatio: CPU per streamed delta attached (the server process + this process running the
 *   real App on a remote core) ÷ CPU per delta of the App on the same core composed in this
 *   process (Ink's renderer on fake TTY streams, production React, as stream-sdk does). Both
 *   warm: the server's second answer (the first compiles its streaming path), the in-process
 *   median over rounds that share this process.
 * - clients20MaxBehindMs: 20 attached clients (separate processes, bundled), 4 lanes streaming
 *   at once, one delta per 4 ms each (1,000 deltas/s in all, several times what models stream):
 *   the largest delay of any delta at any client (and the p99 over clients).
 * Budgets: p95 ≤ 5 ms, ratio ≤ 1.3, no client behind by more than 100 ms.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { BenchOptions } from './harness';
import { percentile, processCpuMs, sleep } from './harness';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const KEY = 'sk-ant-bench-key-0123456789';

interface Replay { readonly url: string; stop(): void }

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

function contextFor(workspace: string, url: string): never {
  return {
    args: { command: 'start', positionals: [], flags: new Map(), global: { help: false, version: false, plain: false } },
    io: { stdout: () => undefined, stderr: () => undefined, env: { HOME: workspace, ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url }, cwd: workspace, isTTY: false },
    appDir: ROOT,
    workspaceRoot: workspace,
  } as never;
}

/** CPU per delta of the core in this process. */
async function inProcess(deltas: number, lanes: number): Promise<number> {
  const { composeApp } = await import('../../src/cli/compose');
  const replay = await startReplay(deltas, 1);
  const workspace = mkdtempSync(join(tmpdir(), 'legion-bench-serve-'));
  const app = await composeApp(contextFor(workspace, replay.url), {});
  const { mountBenchApp } = await import('../helpers/tui-bench');
  const ui = mountBenchApp(app.core, { columns: 200, rows: 50, maxLanes: 4 });
  let seen = 0;
  const off = app.core.bus.subscribe('text-delta', () => void (seen += 1));
  try {
    await sleep(200);
    const cpu0 = process.cpuUsage();
    const ids = ['default', 'b', 'c', 'd'].slice(0, lanes).map((name) => {
      const sent = app.core.send('ur-agent', 'Please write a long answer.', name);
      if (!sent.ok) throw new Error(sent.error);
      return sent.sessionId;
    });
    await Promise.all(ids.map((id) => app.core.idle(id)));
    await sleep(100); // the last frame
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / 1000 / Math.max(1, seen);
  } finally {
    off();
    ui.unmount();
    await app.close('bench');
    replay.stop();
    rmSync(workspace, { recursive: true, force: true });
  }
}

interface Served { readonly workspace: string; readonly socket: string; readonly child: ChildProcess; stop(): Promise<void> }

async function startServe(url: string): Promise<Served> {
  const workspace = mkdtempSync(join(tmpdir(), 'legion-bench-serve-'));
  const env = { ...process.env, HOME: workspace, ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url, LEGION_TEST: undefined, CI: undefined };
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'legion.js'), 'serve'], { cwd: workspace, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (d) => { log += d; });
  const deadline = Date.now() + 60_000;
  while (!/serving run/.test(log)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`legion serve did not start: ${log}`);
    await sleep(50);
  }
  const exited = new Promise((r) => child.once('exit', r));
  return {
    workspace, socket: join(workspace, '.legion', 'serve.sock'), child,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

/** Attached: latency of each delta at a remote core in this process, and CPU per delta of server + this client. */
async function attached(deltas: number, withUi: boolean): Promise<{ latencyP95Ms: number; cpuPerDeltaMs: number; serverPerDeltaMs: number; clientPerDeltaMs: number }> {
  const { attachRemote } = await import('../../src/serve/remote-core');
  const replay = await startReplay(deltas, 1);
  const served = await startServe(replay.url);
  try {
    const core = (await attachRemote({ socket: served.socket, client: 'bench' })).core;
    // A server lives long: measure it warm, as the in-process figure is (its rounds share one
    // process). A first answer, unmeasured and before the renderer mounts, compiles the
    // server's streaming path; a fresh `legion serve` measured cold spent a third more per delta.
    const warm = core.send('ur-agent', 'Please write a long answer.');
    if (!warm.ok) throw new Error(warm.error);
    await core.idle(warm.sessionId);
    const { mountBenchApp } = await import('../helpers/tui-bench');
    const ui = withUi ? mountBenchApp(core, { columns: 200, rows: 50, maxLanes: 4 }) : null;
    const lags: number[] = [];
    core.bus.subscribe('text-delta', (event) => void lags.push(Date.now() - Date.parse(event.at)));
    await sleep(200);
    const server0 = processCpuMs(served.child.pid!)!;
    const cpu0 = process.cpuUsage();
    const sent = core.send('ur-agent', 'Please write a long answer.');
    if (!sent.ok) throw new Error(sent.error);
    await sleep(50);
    await core.idle(sent.sessionId);
    await sleep(100); // the last frame
    const cpu = process.cpuUsage(cpu0);
    const server1 = processCpuMs(served.child.pid!)!;
    ui?.unmount();
    const serverMs = (server1.precise ?? server1.ticks) - (server0.precise ?? server0.ticks);
    await core.shutdown('bench');
    const n = Math.max(1, lags.length);
    const clientMs = (cpu.user + cpu.system) / 1000;
    return { latencyP95Ms: percentile(lags, 95), cpuPerDeltaMs: (clientMs + serverMs) / n, serverPerDeltaMs: serverMs / n, clientPerDeltaMs: clientMs / n };
  } finally {
    await served.stop();
    replay.stop();
  }
}

async function buildClient(): Promise<string> {
  const dir = join(ROOT, 'node_modules', '.cache', 'legion-bench');
  mkdirSync(dir, { recursive: true });
  const outfile = join(dir, `serve-client-${process.pid}.mjs`);
  await build({ entryPoints: [join(HERE, 'serve-client.ts')], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning' });
  return outfile;
}

/** 20 clients, 4 lanes streaming: how far behind the server the slowest delivery was. */
async function manyClients(deltas: number, clients: number, intervalMs: number): Promise<{ maxBehindMs: number; p99BehindMs: number; delivered: number }> {
  const { attachRemote } = await import('../../src/serve/remote-core');
  const script = await buildClient();
  const replay = await startReplay(deltas, intervalMs);
  const served = await startServe(replay.url);
  const children: ChildProcess[] = [];
  try {
    const outputs = await Promise.all(Array.from({ length: clients }, async () => {
      const child = spawn(process.execPath, [script, served.socket], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
      children.push(child);
      let out = '';
      child.stdout!.on('data', (d) => { out += d; });
      const deadline = Date.now() + 60_000;
      while (!out.includes('ready\n')) {
        if (Date.now() > deadline) throw new Error('a client did not attach');
        await sleep(20);
      }
      return { child, out: () => out };
    }));
    const driver = (await attachRemote({ socket: served.socket, client: 'driver' })).core;
    const ids = ['default', 'b', 'c', 'd'].map((name) => {
      const sent = driver.send('ur-agent', 'Please write a long answer.', name);
      if (!sent.ok) throw new Error(sent.error);
      return sent.sessionId;
    });
    await sleep(50);
    await Promise.all(ids.map((id) => driver.idle(id)));
    await driver.shutdown('bench');
    await sleep(200);
    const results = await Promise.all(outputs.map(async ({ child, out }) => {
      child.stdin!.end();
      await new Promise((r) => child.once('exit', r));
      return JSON.parse(out().split('\n').filter(Boolean).at(-1)!) as { deltas: number; maxBehindMs: number; p99BehindMs: number };
    }));
    return {
      maxBehindMs: Math.max(...results.map((r) => r.maxBehindMs)),
      p99BehindMs: Math.max(...results.map((r) => r.p99BehindMs)),
      delivered: Math.min(...results.map((r) => r.deltas)),
    };
  } finally {
    for (const c of children) c.kill();
    await served.stop();
    replay.stop();
    rmSync(script, { force: true });
  }
}

export async function run({ smoke, note }: BenchOptions): Promise<Record<string, number>> {
  // Before React and Ink load: production React, and Ink not in CI mode (it skips frames there).
  process.env.NODE_ENV = 'production';
  delete process.env.CI;
  const deltas = smoke ? 200 : 2000;
  const rounds = smoke ? 1 : 3;
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const local: number[] = [];
  const remote: number[] = [];
  const latency: number[] = [];
  for (let i = 0; i < rounds; i++) {
    local.push(await inProcess(deltas, 1));
    const a = await attached(deltas, true);
    remote.push(a.cpuPerDeltaMs);
    // The delivery to the attached core, without a renderer sharing its event loop.
    latency.push((await attached(deltas, false)).latencyP95Ms);
    note?.(`round ${i + 1}: server ${a.serverPerDeltaMs.toFixed(3)} ms + client ${a.clientPerDeltaMs.toFixed(3)} ms per delta attached, ${local[i]!.toFixed(3)} ms in-process`);
  }
  const many = await manyClients(smoke ? 100 : 1000, smoke ? 3 : 20, 4);
  note?.(`20 clients received at least ${many.delivered} deltas each`);
  return {
    latencyP95Ms: median(latency),
    inProcessCpuPerDeltaMs: median(local),
    attachedCpuPerDeltaMs: median(remote),
    cpuRatio: median(remote) / median(local),
    clients20MaxBehindMs: many.maxBehindMs,
    clients20P99BehindMs: many.p99BehindMs,
  };
}
