/**
 * Profile the headless streaming path in-process (a helper for docs/streaming.md, not a
 * benchmark): compose a run headlessly against the paced replay server (child process), send
 * one message, and write a .cpuprofile of the stream to argv[2] (default ./headless.cpuprofile).
 * Usage: node --import tsx test/bench/profile-headless.ts <out.cpuprofile> [deltas]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { composeApp } from '../../src/cli/compose';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const out = process.argv[2] ?? 'headless.cpuprofile';
const deltas = Number(process.argv[3] ?? 3000);

const child = spawn(process.execPath, ['--import', 'tsx', join(HERE, 'replay-child.ts'), JSON.stringify({ vendor: 'anthropic', deltas, intervalMs: 1 })], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
const port = await new Promise<number>((done) => child.stdout!.once('data', (chunk: Buffer) => done((JSON.parse(chunk.toString().split('\n')[0]!) as { port: number }).port)));
const workspace = mkdtempSync(join(tmpdir(), 'legion-profile-'));
const env = { HOME: workspace, ANTHROPIC_API_KEY: 'sk-ant-bench-key-0123456789', ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` };
const context = {
  args: { command: 'run', positionals: [], flags: new Map(), global: { help: false, version: false, plain: false } },
  io: { stdout: () => undefined, stderr: () => undefined, env, cwd: workspace, isTTY: false },
  appDir: ROOT,
  workspaceRoot: workspace,
};
for (const pass of ['warm', 'measure']) {
  const app = await composeApp(context as never, { headless: { approve: 'deny' } });
  const session = new Session();
  if (pass === 'measure') {
    session.connect();
    await session.post('Profiler.enable');
    if (process.env.PROFILE_INTERVAL_US) await session.post('Profiler.setSamplingInterval', { interval: Number(process.env.PROFILE_INTERVAL_US) });
    await session.post('Profiler.start');
  }
  const cpu0 = process.cpuUsage();
  const sent = app.core.send('ur-agent', 'hi', pass);
  if (!sent.ok) throw new Error(sent.error);
  await app.core.idle(sent.sessionId);
  const cpu = process.cpuUsage(cpu0);
  if (pass === 'measure') {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(out, JSON.stringify(profile));
    session.disconnect();
  }
  process.stdout.write(`${pass}: ${((cpu.user + cpu.system) / 1000 / deltas).toFixed(3)} ms CPU per delta (in-process, whole turn)\n`);
  await app.close('profile');
}
child.stdin!.end();
rmSync(workspace, { recursive: true, force: true });
