import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
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

/** Release `racers` at the barrier of each round; the number of winners per round. `before(round)` runs before each release. */
async function race(racers: Racer[], barriers: string, before: (round: number) => Promise<void>): Promise<number[]> {
  for (const r of racers) assert.deepEqual(await r.next(), { ready: true });
  const wins: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await before(round);
    await writeFile(join(barriers, `go-${round}`), '');
    const results = await Promise.all(racers.map((r) => r.next()));
    for (const result of results) assert.equal(result.round, round);
    wins.push(results.filter((result) => result.ok === true).length);
  }
  return wins;
}

async function stopRacers(racers: Racer[]): Promise<void> {
  for (const r of racers) r.child.stdin!.end();
  await Promise.all(racers.map((r) => (r.child.exitCode === null ? once(r.child, 'exit') : undefined)));
}

/**
 * The takeover race (found with 400 rounds, about once; the deterministic checks are in
 * test/unit/foundation/lock-file.test.ts): each round's run holds the lock of a holder that was killed (a real pid,
 * SIGKILLed), and three processes are released on it at once. Each judges it stale and takes it
 * over; a remover that finds the lock already replaced must not open a moment in which a third
 * one creates its own while the second still believes it holds the lock. Exactly one may win.
 */
test(`run lock: a killed holder's lock, three processes released on it at once, ${ROUNDS} rounds: exactly one takes it over each round`, { timeout: 180_000 }, async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    const barriers = join(dir, 'barriers');
    await mkdir(barriers);
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const deadPid = holder.pid!;
    holder.kill('SIGKILL');
    await once(holder, 'exit');
    for (let r = 0; r < ROUNDS; r++) await mkdir(layout.runDir(`race-${r}`), { recursive: true });
    const racers = [racer(dir, barriers), racer(dir, barriers), racer(dir, barriers)];
    try {
      const stale = (round: number) => writeFile(layout.runLock(`race-${round}`), JSON.stringify({ pid: deadPid, hostname: hostname(), startedAt: new Date().toISOString(), token: `killed-${round}` }) + '\n');
      const wins = await race(racers, barriers, stale);
      const bad = wins.map((n, round) => ({ round, winners: n })).filter((w) => w.winners !== 1);
      assert.deepEqual(bad, [], 'rounds without exactly one winner');
    } finally {
      await stopRacers(racers);
    }
  });
});

test(`run lock: two processes released at the same instant, ${ROUNDS} rounds: exactly one wins each round`, { timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    const barriers = join(dir, 'barriers');
    await mkdir(barriers);
    for (let r = 0; r < ROUNDS; r++) await mkdir(layout.runDir(`race-${r}`), { recursive: true });
    const racers = [racer(dir, barriers), racer(dir, barriers)];
    try {
      const wins = await race(racers, barriers, async () => undefined);
      const bad = wins.map((n, round) => ({ round, winners: n })).filter((w) => w.winners !== 1);
      assert.deepEqual(bad, [], 'rounds without exactly one winner');
    } finally {
      await stopRacers(racers);
    }
  });
});
