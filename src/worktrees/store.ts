import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic } from '../storage/atomic';
import { lazySchema } from '../storage/lazy-schema';
import { surelyAbsent } from '../storage/absent';

/**
 * What Legion keeps about each isolated session (docs/worktrees.md), one file per session in
 * `.legion/worktrees/<session-id>.json` beside the worktree folder `.legion/worktrees/<session-id>/`.
 *   working   the agent works (or may work again) in its worktree
 *   waiting   a merge request waits for a decision
 *   merged    the last merge was applied to the workspace
 *   rejected  the last merge request was rejected (the branch keeps the work until pruned)
 *   conflict  the last merge conflicts with the workspace: a new message to the session rebases it
 */
export const WORKTREE_STATES = ['working', 'waiting', 'merged', 'rejected', 'conflict'] as const;
export type WorktreeState = (typeof WORKTREE_STATES)[number];
/** States after which a worktree may be pruned. */
export const FINISHED_STATES: ReadonlySet<WorktreeState> = new Set(['merged', 'rejected']);

const recordSchema = lazySchema(() =>
  z.object({
    version: z.literal(1),
    sessionId: z.string().regex(/^[A-Za-z0-9._-]+$/),
    participantId: z.string(),
    runId: z.string(),
    branch: z.string(),
    /** The worktree folder (absolute). */
    path: z.string(),
    /** Where the session's tools are rooted: `path` + the workspace's prefix inside the repository. */
    root: z.string(),
    /** The commit the agent's work is measured against (the workspace when delegated, or after a rebase). */
    base: z.string().regex(/^[0-9a-f]{40,64}$/),
    state: z.enum(WORKTREE_STATES),
    /** Conflicting files, with state `conflict`. */
    conflicts: z.array(z.string()).optional(),
    /** With state `conflict`: the workspace snapshot and the merged tree (markers included) a rebase checks out. */
    rebase: z.object({ ours: z.string(), merged: z.string() }).optional(),
    /** Why a merge request was rejected. */
    reason: z.string().optional(),
    updatedAt: z.string(),
  }),
);
export type WorktreeRecord = z.infer<ReturnType<typeof recordSchema>>;

export interface WorktreeStore {
  readonly dir: string;
  folderOf(sessionId: string): string;
  get(sessionId: string): Promise<WorktreeRecord | undefined>;
  put(record: WorktreeRecord): Promise<void>;
  list(): Promise<WorktreeRecord[]>;
  remove(sessionId: string): Promise<void>;
}

/** The records under `dir` (`.legion/worktrees`); a damaged file reads as absent. */
export function worktreeStore(dir: string): WorktreeStore {
  const file = (sessionId: string): string => join(dir, `${sessionId}.json`);
  const read = async (path: string): Promise<WorktreeRecord | undefined> => {
    try {
      const parsed = recordSchema().safeParse(JSON.parse(await readFile(path, 'utf8')));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    dir,
    folderOf: (sessionId) => join(dir, sessionId),
    get: (sessionId) => read(file(sessionId)),
    put: (record) => writeJsonAtomic(file(record.sessionId), record),
    async list() {
      const names = surelyAbsent(dir) ? [] : await readdir(dir).catch(() => [] as string[]);
      const out: WorktreeRecord[] = [];
      for (const name of names.filter((n) => n.endsWith('.json') && !n.endsWith('.merge.json')).sort()) {
        const record = await read(join(dir, name));
        if (record) out.push(record);
      }
      return out;
    },
    remove: (sessionId) => unlink(file(sessionId)).catch(() => undefined),
  };
}
