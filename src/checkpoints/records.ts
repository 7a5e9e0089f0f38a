import { z } from 'zod';
import { appendJsonl, readJsonl } from '../storage/jsonl';
import { zodValidator } from '../storage/zod-validate';
import { writeTextAtomic } from '../storage/atomic';

/**
 * `.legion/checkpoints/checkpoints.jsonl`: append-only, one line per step of a checkpoint.
 * `before` is written when the snapshot before a batch is taken, `after` once the batch ended
 * (the tree after it and the files it changed). A checkpoint whose batch never ended (crash)
 * has no `after`. Pruning rewrites the file without the pruned checkpoints.
 */
const fileChange = z.strictObject({
  path: z.string().min(1),
  /** A added, M modified (bytes or mode), D deleted, T type changed (file ↔ symlink). */
  status: z.enum(['A', 'M', 'D', 'T']),
  /** Git mode and blob id before and after ('000000' and zeros when absent). */
  oldMode: z.string(), newMode: z.string(), oldBlob: z.string(), newBlob: z.string(),
});
export type FileChange = z.infer<typeof fileChange>;

const beforeRecord = z.strictObject({
  v: z.literal(1),
  kind: z.literal('before'),
  id: z.string().min(1),
  at: z.string(),
  runId: z.string(),
  sessionId: z.string(),
  participantId: z.string(),
  toolUseIds: z.array(z.string()),
  toolNames: z.array(z.string()),
  /** The responder's turn in the session (1 = first), told to the agent when its work is undone. */
  turn: z.number().int().nonnegative(),
  /** Tree id of the workspace before the batch. */
  tree: z.string().min(1),
  /** Set on the checkpoint taken before a restore: the checkpoint that was restored. */
  restoreOf: z.string().optional(),
});
const afterRecord = z.strictObject({
  v: z.literal(1),
  kind: z.literal('after'),
  id: z.string().min(1),
  at: z.string(),
  tree: z.string().min(1),
  files: z.array(fileChange),
});
const recordSchema = z.discriminatedUnion('kind', [beforeRecord, afterRecord]);
export type BeforeRecord = z.infer<typeof beforeRecord>;
export type AfterRecord = z.infer<typeof afterRecord>;
export type CheckpointRecord = z.infer<typeof recordSchema>;

/** A checkpoint as listed: its `before`, and its `after` once the batch ended. */
export interface Checkpoint extends BeforeRecord {
  readonly after?: AfterRecord;
}

export function appendRecord(file: string, record: CheckpointRecord): void {
  appendJsonl(file, record);
}

/** Every checkpoint, oldest first, with problems found reading (torn or invalid lines are skipped). */
export async function readCheckpoints(file: string): Promise<{ checkpoints: Checkpoint[]; issues: string[] }> {
  const read = await readJsonl(file, zodValidator(recordSchema));
  const byId = new Map<string, Checkpoint>();
  for (const record of read.records) {
    if (record.kind === 'before') byId.set(record.id, { ...record });
    else {
      const found = byId.get(record.id);
      if (found) byId.set(record.id, { ...found, after: record });
    }
  }
  return { checkpoints: [...byId.values()], issues: read.issues.map((i) => i.message) };
}

/** Rewrite the file with only `keep` (pruning). */
export async function rewriteCheckpoints(file: string, keep: readonly Checkpoint[]): Promise<void> {
  const lines: CheckpointRecord[] = [];
  for (const { after, ...before } of keep) {
    lines.push(before);
    if (after) lines.push(after);
  }
  await writeTextAtomic(file, lines.map((l) => JSON.stringify(l) + '\n').join(''));
}
