/**
 * Compare the SDKs' two fetches on the headless streaming path (a helper for docs/streaming.md,
 * not a benchmark): compose a run in this process against the paced replay server (child
 * process), and alternate turns over Node's built-in fetch (`LEGION_FETCH=builtin`) and the
 * node:http one (src/providers/node-fetch.ts), so both see the same machine load. Prints the
 * CPU per delta of each (medians; the first round is a warm-up).
 * Usage: node --import tsx test/bench/ab-fetch.ts [deltas=3000] [rounds=6]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { composeApp } from '../../src/cli/compose';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const deltas = Number(process.argv[2] ?? 3000);
const rounds = Number(process.argv[3] ?? 6);
const child = spawn(process.execPath, ['--import', 'tsx', join(HERE, 'replay-child.ts'), JSON.stringify({ vendor: 'anthropic', deltas, intervalMs: 1 })], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
const port = await new Promise<number>((done) => child.stdout!.once('data', (chunk: Buffer) => done((JSON.parse(chunk.toString().split('\n')[0]!) as { port: number }).port)));
const workspace = mkdtempSync(join(tmpdir(), 'legion-abfetch-'));
const env = { HOME: workspace, ANTHROPIC_API_KEY: 'sk-ant-bench-key-0123456789', ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` };
const context = { args: { command: 'run', positionals: [], flags: new Map(), global: { help: false, version: false, plain: false } }, io: { stdout: () => undefined, stderr: () => undefined, env, cwd: workspace, isTTY: false }, appDir: ROOT, workspaceRoot: workspace };
const res: Record<string, number[]> = { builtin: [], node: [] };
for (let r = 0; r < rounds + 1; r++) {
  for (const kind of ['builtin', 'node']) {
    if (kind === 'builtin') process.env.LEGION_FETCH = 'builtin'; else delete process.env.LEGION_FETCH;
    const app = await composeApp(context as never, { headless: { approve: 'deny' } });
    const cpu0 = process.cpuUsage();
    const sent = app.core.send('ur-agent', 'hi', `${kind}-${r}`);
    if (!sent.ok) throw new Error(sent.error);
    await app.core.idle(sent.sessionId);
    const cpu = process.cpuUsage(cpu0);
    if (r > 0) res[kind]!.push((cpu.user + cpu.system) / 1000 / deltas);
    await app.close('ab');
  }
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
for (const [k, v] of Object.entries(res)) console.log(k, 'median ms/delta', med(v).toFixed(3), v.map((x) => x.toFixed(3)).join(' '));
child.stdin!.end();
rmSync(workspace, { recursive: true, force: true });
