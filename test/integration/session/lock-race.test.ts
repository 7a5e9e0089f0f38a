import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { layoutFor } from '../../../src/storage/layout';
import { withTempDir } from '../../helpers/tmp';

/**
 * The run lock's atomicity, raced for real: two processes load the lock code, then spin on a
 * barrier file and call acquireRunLock the moment it appears, on a fresh run each round.
 * Exactly one may win every round. (A check-then-write lock loses this within a few rounds:
 * verified by swapping createExclusive for `existsSync` + `writeFileSync`.)
 */
const RACER = join(import.meta.dirname, 'fixtures', 'lock-racer.ts');
const ROUNDS = Number(process.env.LEGION_LOCK_RACE_ROUNDS ?? 150);

interface Racer { child: ChildProcess; next(): Promise<Record<string, unknown>> }

function racer(workspace: string, barrierDir: string): Racer {
  const child = spawn(process.execPath, ['--import', 'tsx', RACER, workspace, barrierDir, String(ROUNDS)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    child,
    async next() {
      const line = await lines.next();
      if (line.done) throw new Error('racer exited early');
      return JSON.parse(line.value) as Record<string, unknown>;
    },
  };
}

test(`run lock: two processes released at the same instant, ${ROUNDS} rounds: exactly one wins each round`, { timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    const barriers = join(dir, 'barriers');
    await mkdir(barriers);
    for (let r = 0; r < ROUNDS; r++) await mkdir(layout.runDir(`race-${r}`), { recursive: true });
    const racers = [racer(dir, barriers), racer(dir, barriers)];
    try {
      for (const r of racers) assert.deepEqual(await r.next(), { ready: true });
      const wins: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        await writeFile(join(barriers, `go-${round}`), '');
        const results = await Promise.all(racers.map((r) => r.next()));
        for (const result of results) assert.equal(result.round, round);
        wins.push(results.filter((result) => result.ok === true).length);
      }
      const bad = wins.map((n, round) => ({ round, winners: n })).filter((w) => w.winners !== 1);
      assert.deepEqual(bad, [], 'rounds without exactly one winner');
    } finally {
      for (const r of racers) r.child.stdin!.end();
      await Promise.all(racers.map((r) => (r.child.exitCode === null ? once(r.child, 'exit') : undefined)));
    }
  });
});
