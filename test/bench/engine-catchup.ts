/**
 * engine-catchup: the hub's catch-up with the projection after a turn (docs/engine.md#legions-share-third-pass)
 * on a 10 MB session file. `before`: the whole file read and parsed (`readSessionFile`, what the hub did
 * each turn until the follower); `after`: `createProjectionFollower.since`, which reads what the
 * turn appended. Each sample appends one turn (two messages) and times both, in alternating order.
 * Run alone: `npx tsx test/bench/engine-catchup.ts [--smoke]`. Wall and CPU time per catch-up, ms.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createProjectionFollower } from '../../src/engine/projection-follower';
import { readSessionFile } from '../../src/session/session-files';
import { layoutFor } from '../../src/storage/layout';
import type { Message } from '../../src/model/message';
import { gc, stats, type BenchOptions } from './harness';

const SESSION = 'session-user__builder__default';
const RUN = 'r1';

function message(i: number): Message {
  return {
    role: i % 2 ? 'assistant' : 'user',
    at: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    content: [{ type: 'text', text: `Message ${i}: here is what I found in the module and what I propose to change next. `.repeat(4) }],
  };
}

export async function run({ smoke }: BenchOptions): Promise<Record<string, number>> {
  const bytes = smoke ? 1_000_000 : 10_000_000;
  const count = smoke ? 10 : 40;
  const root = mkdtempSync(join(tmpdir(), 'legion-bench-catchup-'));
  try {
    const layout = layoutFor(root);
    const file = layout.sessionFile(RUN, SESSION);
    mkdirSync(dirname(file), { recursive: true });
    let text = '';
    let n = 0;
    while (text.length < bytes) text += `${JSON.stringify(message(n++))}\n`;
    writeFileSync(file, text);
    text = '';
    const follower = createProjectionFollower((id) => layout.sessionFile(RUN, id));
    follower.since(SESSION, 0);
    const samples = { beforeWall: [] as number[], beforeCpu: [] as number[], afterWall: [] as number[], afterCpu: [] as number[] };
    const time = async (fn: () => unknown, wall: number[], cpu: number[]): Promise<void> => {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await fn();
      wall.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
    };
    gc();
    for (let i = 0; i < count; i++) {
      appendFileSync(file, `${JSON.stringify(message(n++))}\n${JSON.stringify(message(n++))}\n`);
      const held = n - 2;
      const before = () => time(async () => (await readSessionFile(layout, RUN, SESSION))!.messages.slice(held), samples.beforeWall, samples.beforeCpu);
      const after = () => time(() => follower.since(SESSION, held), samples.afterWall, samples.afterCpu);
      if (i % 2) { await before(); await after(); } else { await after(); await before(); }
    }
    return {
      fileMB: statSync(file).size / 1e6,
      beforeWallMs: stats(samples.beforeWall).median,
      beforeCpuMs: stats(samples.beforeCpu).median,
      afterWallMs: stats(samples.afterWall).median,
      afterCpuMs: stats(samples.afterCpu).median,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('engine-catchup.ts')) {
  void run({ smoke: process.argv.includes('--smoke') }).then((figures) => console.log(JSON.stringify(figures)));
}
