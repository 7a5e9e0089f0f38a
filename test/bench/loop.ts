/**
 * loop: agent turns per second through the whole headless core, the faux provider
 * answering at once. One turn = the user's message, a provider request answered with one
 * tool call (`list_participants`, allowed by the shipped rules: authorized, audited, run),
 * the result message, a second request answered with the final text. Everything is real:
 * composition root, rules, audit log, session files, ledger, approval queue.
 * Turns run one after the other (send → idle), spread over 500 sessions so a history
 * stays short (≤ 9 turns: a provider is sent the whole history each call, and that cost
 * grows with the session, not with the loop). `cpuTurnsPerSecond` divides by the process's
 * CPU time instead of wall time (the figure to read on a busy machine).
 * Budget: ≥ 2,000 turns/s.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { composeApp } from '../../src/cli/compose';
import { parseArgs } from '../../src/cli/args';
import type { BenchOptions } from './harness';

const SCRIPT = `
version: 1
replies:
  - { agent: ur-agent, on: message, repeat: true, toolCalls: [{ name: list_participants, input: {} }] }
  - { agent: ur-agent, on: tool-result, repeat: true, text: "done" }
`;

export async function run({ smoke }: BenchOptions): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'legion-bench-loop-'));
  const sessions = smoke ? 10 : 500;
  const turns = smoke ? 100 : Number(process.env.BENCH_TURNS ?? 4000);
  const warmup = smoke ? 20 : 400;
  try {
    writeFileSync(join(dir, 'script.yaml'), SCRIPT);
    const env = { HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
    const app = await composeApp({
      args: parseArgs(['run', 'x'], { run: {} }, 'run'),
      io: { stdout: () => undefined, stderr: () => undefined, env, cwd: dir, isTTY: false },
      appDir: resolve(import.meta.dirname, '..', '..'),
      workspaceRoot: dir,
    }, { headless: { approve: 'deny' } });
    const { core } = app;
    const turn = async (i: number): Promise<void> => {
      const sent = core.send('ur-agent', `turn ${i}`, `s${i % sessions}`);
      if (!sent.ok) throw new Error(sent.error);
      const text = await core.idle(sent.sessionId);
      if (text !== 'done') throw new Error(`unexpected answer: ${text}`);
    };
    for (let i = 0; i < warmup; i++) await turn(i);
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < turns; i++) await turn(warmup + i);
    const elapsedMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000;
    await app.close('bench done');
    return { turnsPerSecond: Math.round((turns / elapsedMs) * 1000), cpuTurnsPerSecond: Math.round((turns / cpuMs) * 1000), msPerTurn: elapsedMs / turns };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
