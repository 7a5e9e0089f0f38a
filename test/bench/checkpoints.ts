/**
 * checkpoints: the cost a checkpoint adds before a tool batch (docs/undo.md#performance), on a
 * workspace of 10,000 files (100 directories × 100 files), through the real store the runtime
 * hook uses (`begin`: snapshot + record + ref):
 * - `noChangeMs`: nothing changed since the last snapshot (the inotify change detector answers,
 *   no git call) — budget 5 ms;
 * - `fewChangedMs`: 5 files changed since (`git add -A` of the 5 paths the change detector saw,
 *   `write-tree`, `diff-tree`) — budget 50 ms;
 * - `fewChangedScanMs`: the same without the change detector (`git add -A` scans the whole tree), for comparison;
 * - `noChangeGitMs`: nothing changed but without the change detector (the git path alone), for comparison.
 * Medians; each sample's `finish` (the after-batch snapshot) is not timed.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openCheckpointStore, type CheckpointStore } from '../../src/checkpoints/store';
import { stats, type BenchOptions } from './harness';

const SUBJECT = { runId: 'bench', sessionId: 'session-user__ur-agent__default', participantId: 'ur-agent', toolUseIds: ['tu'], toolNames: ['shell'], turn: 1 };

async function timeBegin(store: CheckpointStore, before: () => void, count: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    before();
    const started = performance.now();
    const open = await store.begin(SUBJECT);
    samples.push(performance.now() - started);
    await open.finish();
  }
  return stats(samples).median;
}

export async function run({ smoke }: BenchOptions): Promise<Record<string, number>> {
  const dirs = smoke ? 10 : 100;
  const count = smoke ? 5 : 40;
  const root = mkdtempSync(join(tmpdir(), 'legion-bench-checkpoints-'));
  try {
    for (let d = 0; d < dirs; d++) {
      mkdirSync(join(root, `d${d}`));
      for (let f = 0; f < 100; f++) writeFileSync(join(root, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`.repeat(20));
    }
    let round = 0;
    const changeFive = (): void => {
      round++;
      for (let k = 0; k < 5; k++) writeFileSync(join(root, `d${(k * 7) % dirs}`, `f${(round + k) % 100}.txt`), `round ${round}\n`);
    };
    const watched = await openCheckpointStore({ workspaceRoot: root, maxFileBytes: 10 * 1024 * 1024, watch: true });
    await (await watched.begin(SUBJECT)).finish(); // the first snapshot of 10,000 files (once per workspace)
    const noChangeMs = await timeBegin(watched, () => undefined, count);
    const fewChangedMs = await timeBegin(watched, changeFive, count);
    watched.close();
    const plain = await openCheckpointStore({ workspaceRoot: root, maxFileBytes: 10 * 1024 * 1024, watch: false });
    const noChangeGitMs = await timeBegin(plain, () => undefined, count);
    const fewChangedScanMs = await timeBegin(plain, changeFive, count);
    plain.close();
    return { noChangeMs, fewChangedMs, fewChangedScanMs, noChangeGitMs };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
