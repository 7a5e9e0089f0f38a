/**
 * worktrees: worktree isolation (docs/worktrees.md#performance), on a git repository of 10,000
 * files (100 directories × 100 files) with uncommitted changes:
 * - `createMs`: making an isolated session's worktree (snapshot of the workspace through a
 *   temporary index, `git worktree add` checking out 10,000 files) — budget 300 ms;
 * - `merge20Ms`: merging 20 changed files back (workspace snapshot, `git merge-tree`, journaled
 *   apply to the working tree) — budget 100 ms;
 * - `collect20Ms`: committing those 20 files on the session's branch and diffing them, right after
 *   the worktree was made (its index still "racily clean": every file is re-read);
 * - `request20Ms`: what the user waits for between the end of the turn and the merge request in the
 *   queue (collect, and the merge checked against the workspace), right after the worktree was made;
 * - `request20WarmMs`: the same after a turn of 2 s (the worktree's index refreshed meanwhile);
 * - `nonIsolatedTurnMicros`: what isolation adds to a turn of a session that is not isolated
 *   (the root lookup of each tool call and the after-turn check), in microseconds.
 * Medians.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createWorktrees } from '../../src/worktrees/service';
import { stats, type BenchOptions } from './harness';
import { secretPathMatcher } from '../../src/tools/sandbox/secrets';
import { DEFAULT_SECRET_PATTERNS } from '../../src/tools/sandbox/secret-patterns';

const git = (root: string, args: string[]): void => {
  execFileSync('git', ['-c', 'user.name=B', '-c', 'user.email=b@b', ...args], { cwd: root, stdio: 'ignore', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' } });
};

export async function run({ smoke }: BenchOptions): Promise<Record<string, number>> {
  const dirs = smoke ? 10 : 100;
  const count = smoke ? 2 : 9;
  const root = mkdtempSync(join(tmpdir(), 'legion-bench-worktrees-'));
  try {
    git(root, ['init', '-q', '-b', 'main']);
    writeFileSync(join(root, '.gitignore'), '.legion/\n');
    for (let d = 0; d < dirs; d++) {
      mkdirSync(join(root, `d${d}`));
      for (let f = 0; f < 100; f++) writeFileSync(join(root, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`.repeat(20));
    }
    git(root, ['add', '-A']);
    git(root, ['commit', '-q', '-m', 'bench']);
    git(root, ['update-index', '-q', '--refresh']); // a fresh index stat cache, as a workspace in use has
    for (let k = 0; k < 5; k++) writeFileSync(join(root, `d${k}`, 'f0.txt'), 'uncommitted\n');
    const worktrees = createWorktrees({ workspaceRoot: root, dir: join(root, '.legion', 'worktrees'), runId: 'bench', now: () => new Date().toISOString(), leaveOut: secretPathMatcher(DEFAULT_SECRET_PATTERNS) });

    const create: number[] = [];
    const collect: number[] = [];
    const merge: number[] = [];
    for (let i = 0; i < count; i++) {
      const sessionId = `session-ur-agent__bench__s${i}`;
      let started = performance.now();
      const isolated = await worktrees.isolate(sessionId, 'bench');
      create.push(performance.now() - started);
      if (!isolated.ok) throw new Error(isolated.error);
      for (let f = 0; f < 20; f++) writeFileSync(join(isolated.record.root, `d${f % dirs}`, `f${10 + i}.txt`), `changed by ${sessionId}\n`);
      started = performance.now();
      const work = await worktrees.collect(sessionId);
      collect.push(performance.now() - started);
      if (!work || work.files.length !== Math.min(20, dirs)) throw new Error(`expected 20 changed files, got ${work?.files.length}`);
      started = performance.now();
      const merged = await worktrees.merge(sessionId, work);
      merge.push(performance.now() - started);
      if (merged.kind !== 'merged') throw new Error(`merge: ${merged.kind}`);
    }

    // A session that is not isolated: the lookups isolation adds per tool call and per turn.
    const lookups = 100_000;
    const started = performance.now();
    let found = 0;
    for (let i = 0; i < lookups; i++) if (worktrees.rootOf(`session-user__ur-agent__n${i % 7}`) !== undefined) found++;
    const nonIsolatedTurnMicros = ((performance.now() - started) * 1000) / lookups;
    if (found !== 0) throw new Error('a session that was never isolated has a root');

    // The merge request as the end of a turn raises it: cold (right after creation) and after a 2 s turn.
    const request: number[] = [];
    const requestWarm: number[] = [];
    for (let i = 0; i < count + (smoke ? 1 : 3); i++) {
      const warm = i >= count;
      const sessionId = `session-ur-agent__bench__r${i}`;
      const isolated = await worktrees.isolate(sessionId, 'bench');
      if (!isolated.ok) throw new Error(isolated.error);
      if (warm) await sleep(2_000);
      for (let f = 0; f < 20; f++) writeFileSync(join(isolated.record.root, `d${f % dirs}`, `f${30 + i}.txt`), `changed by ${sessionId}\n`);
      const started = performance.now();
      const raised = await worktrees.collectChecked(sessionId);
      (warm ? requestWarm : request).push(performance.now() - started);
      if (!raised || raised.check.kind !== 'clean') throw new Error(`request: ${raised?.check.kind}`);
      const merged = await worktrees.merge(sessionId, raised.work);
      if (merged.kind !== 'merged') throw new Error(`merge: ${merged.kind}`);
    }
    await worktrees.stop();

    return {
      createMs: stats(create).median, merge20Ms: stats(merge).median, collect20Ms: stats(collect).median,
      request20Ms: stats(request).median, request20WarmMs: stats(requestWarm).median, nonIsolatedTurnMicros,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
