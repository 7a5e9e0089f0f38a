import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { worktreeStore } from './store';

/**
 * Where an isolated session's checkpoints live (docs/worktrees.md#checkpoints-and-undo):
 * `.legion/worktrees/<session-id>.checkpoints/`, beside its worktree and not inside it, so that
 * nothing the agent runs in its worktree (its sandbox may write there) reaches them.
 */
export function worktreeCheckpointsDir(worktreesDir: string, sessionId: string): string {
  return join(worktreesDir, `${sessionId}.checkpoints`);
}

/** An isolated session that has checkpoints: the root they snapshot and where they are kept. */
export interface WorktreeCheckpoints {
  readonly sessionId: string;
  readonly root: string;
  readonly dir: string;
}

/** The isolated sessions (of `sessionId` only when given) whose worktree has checkpoints. */
export async function worktreesWithCheckpoints(worktreesDir: string, sessionId?: string): Promise<WorktreeCheckpoints[]> {
  const store = worktreeStore(worktreesDir);
  const records = sessionId ? [await store.get(sessionId)].filter((r) => r !== undefined) : await store.list();
  const found: WorktreeCheckpoints[] = [];
  for (const record of records) {
    const dir = worktreeCheckpointsDir(worktreesDir, record.sessionId);
    if (await stat(join(dir, 'checkpoints.jsonl')).then(() => true, () => false)) found.push({ sessionId: record.sessionId, root: record.root, dir });
  }
  return found;
}
