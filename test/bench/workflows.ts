/**
 * workflows: what running work as a workflow costs on the path users run — `legion run
 * --workflow` in this process (main(), the composition root, the real Anthropic SDK over HTTP
 * to the local replay server of test/helpers/vendor-server.ts), every model answer taking
 * `LATENCY_MS` before its first byte.
 * - perStepMs: (a 10-step pipeline − one plain `legion run`) ÷ 9, minus the model latency: what
 *   Legion adds per extra step (session, prompt rendering, progress file written atomically,
 *   events), median of 3.
 * - fanout8Ms / pipeline9Ms: 8 independent steps plus a join, against 9 steps in a chain, with
 *   the same latency: parallel steps really run together (the fan-out takes ~2 latencies).
 * Judged: fanoutRatio (test/bench/budgets.ts); the others are reported, figures in docs/workflows.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { BenchOptions } from './harness';
import { stats } from './harness';
import { runCli } from '../helpers/cli';
import { sse, startVendorServer } from '../helpers/vendor-server';
import { anthropicStream } from '../helpers/vendor-streams';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const LATENCY_MS = 40;

const chain = (n: number): string => `steps:\n${Array.from({ length: n }, (_, i) => `  - { id: s${i}, agent: ur-agent, prompt: "step ${i} {{input}}"${i > 0 ? `, after: [s${i - 1}]` : ''} }`).join('\n')}\n`;
const fanout = (n: number): string => `steps:\n${Array.from({ length: n }, (_, i) => `  - { id: s${i}, agent: ur-agent, prompt: "part ${i} {{input}}" }`).join('\n')}\n  - { id: join, agent: ur-agent, after: [${Array.from({ length: n }, (_, i) => `s${i}`).join(', ')}], prompt: "join" }\n`;

export async function run(options: BenchOptions): Promise<Record<string, number>> {
  const rounds = options.smoke ? 1 : 3;
  const server = await startVendorServer({});
  const dir = mkdtempSync(join(tmpdir(), 'legion-bench-workflows-'));
  try {
    mkdirSync(join(dir, '.legion', 'workflows'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, '.legion', 'workflows', 'chain10.yaml'), chain(10), { mode: 0o600 });
    writeFileSync(join(dir, '.legion', 'workflows', 'chain9.yaml'), chain(9), { mode: 0o600 });
    writeFileSync(join(dir, '.legion', 'workflows', 'fan8.yaml'), fanout(8), { mode: 0o600 });
    const env = { HOME: dir, ANTHROPIC_API_KEY: 'sk-ant-bench-key-0123456789', ANTHROPIC_BASE_URL: server.anthropicURL };
    const answer = () => sse(anthropicStream({ text: ['done'], stopReason: 'end_turn' }), { firstByteDelayMs: LATENCY_MS });
    const timed = async (argv: string[], answers: number): Promise<number> => {
      server.enqueue(...Array.from({ length: answers }, answer));
      const start = performance.now();
      const result = await runCli(argv, { cwd: dir, env, appDir: ROOT });
      const ms = performance.now() - start;
      if (result.code !== 0) throw new Error(`legion ${argv.join(' ')}: exit ${result.code}: ${result.stderr}`);
      return ms;
    };
    await timed(['run', 'warm up'], 1);
    const single: number[] = [];
    const ten: number[] = [];
    const nine: number[] = [];
    const fan: number[] = [];
    for (let i = 0; i < rounds; i++) {
      single.push(await timed(['run', 'one'], 1));
      ten.push(await timed(['run', '--workflow', 'chain10', 'x'], 10));
      nine.push(await timed(['run', '--workflow', 'chain9', 'x'], 9));
      fan.push(await timed(['run', '--workflow', 'fan8', 'x'], 9));
    }
    const s = stats(single).median;
    const t = stats(ten).median;
    return {
      singleRunMs: s,
      pipeline10Ms: t,
      perStepMs: (t - s) / 9 - LATENCY_MS,
      pipeline9Ms: stats(nine).median,
      fanout8Ms: stats(fan).median,
      // Parallel steps must overlap: 8 independent steps + a join ÷ 9 steps in a chain.
      fanoutRatio: stats(fan).median / stats(nine).median,
    };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
