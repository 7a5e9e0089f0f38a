import { mkdir } from 'node:fs/promises';
import { runGit } from './git';
import { diffTrees } from './diff';
import { appendRecord, readCheckpoints, type Checkpoint, type FileChange } from './records';
import { checkpointPaths, ensureShadowRepo, type CheckpointPaths } from './shadow-repo';
import { createRepoLock, type RepoLock } from './lock';
import { keepTree, takeSnapshot } from './snapshot';
import { createChangeWatcher, type ChangeWatcher } from './watcher';
import { newCheckpointId } from './ids';

/**
 * The checkpoints of one workspace (docs/undo.md): snapshots in a shadow git repository under
 * `.legion/checkpoints/`, one record per checkpoint in `checkpoints.jsonl`, the trees kept
 * reachable by refs `refs/legion/before/<id>` and `refs/legion/after/<id>`.
 */
export interface CheckpointStoreOptions {
  /** The tree snapshotted and restored: the workspace, or an isolated session's worktree. */
  readonly workspaceRoot: string;
  /** Where the shadow repository and records live; default `<workspaceRoot>/.legion/checkpoints`. */
  readonly dir?: string;
  readonly maxFileBytes: number;
  /** Watch the workspace so a snapshot with nothing changed costs no git call (long-lived processes). */
  readonly watch?: boolean;
  readonly clock?: () => Date;
  /** Problems worth telling (a file left out for its size, an unreadable file). */
  readonly warn?: (message: string) => void;
}

/** What a checkpoint is taken for. */
export interface CheckpointSubject {
  readonly runId: string;
  readonly sessionId: string;
  readonly participantId: string;
  readonly toolUseIds: readonly string[];
  readonly toolNames: readonly string[];
  readonly turn: number;
  readonly restoreOf?: string;
}

export interface OpenCheckpoint {
  readonly id: string;
  readonly tree: string;
  /** Snapshot again and record what the batch changed. */
  finish(): Promise<FileChange[]>;
}

export interface CheckpointStore {
  readonly paths: CheckpointPaths;
  readonly lock: RepoLock;
  /** Resolves once the change detector is up (true), or false when there is none. */
  readonly whenWatching: Promise<boolean>;
  /** Snapshot now and record a checkpoint for `subject`. */
  begin(subject: CheckpointSubject): Promise<OpenCheckpoint>;
  /** Snapshot now (a full `git add -A`, ignoring the watcher) and return the tree; the caller holds the lock. */
  snapshotLocked(): Promise<string>;
  /**
   * Under the lock: snapshot, refuse when the workspace is not `expectedTree` any more, record a
   * checkpoint for `subject` (so the restore can be undone), run `apply`, record what it changed.
   */
  restoreLocked(subject: CheckpointSubject, expectedTree: string, apply: () => Promise<void>): Promise<{ ok: true; id: string } | { ok: false; error: string }>;
  list(): Promise<Checkpoint[]>;
  close(): void;
}

export async function openCheckpointStore(options: CheckpointStoreOptions): Promise<CheckpointStore> {
  const paths = checkpointPaths(options.workspaceRoot, options.dir);
  const clock = options.clock ?? (() => new Date());
  await mkdir(paths.dir, { recursive: true, mode: 0o700 });
  const lock = createRepoLock({ lockFile: paths.lock, gitDir: paths.place.gitDir });
  await lock.run(() => ensureShadowRepo(paths));
  let lastTree: string | undefined;
  /** The changes of the last snapshot and the tree they start from (reused by `recordAfter`). */
  let lastChanges: { from: string | undefined; to: string; changes: readonly FileChange[] } | undefined;
  // The change detector starts in the background (startup does not wait for git): until it is
  // up, every snapshot goes through git, and it starts "dirty" anyway.
  let watcher: ChangeWatcher | undefined;
  let closed = false;
  const whenWatching = !options.watch ? Promise.resolve(false) : ignoredDirs(paths).then((ignored) => {
    if (closed) return false;
    watcher = createChangeWatcher({ root: options.workspaceRoot, ignoredDirs: ignored });
    return true;
  });

  /** Snapshot the workspace: only `changed` when given (the watcher's list since the last one), else all of it. */
  const snapshotLocked = async (changed?: ReadonlySet<string>): Promise<string> => {
    watcher?.arm(); // before reading: a change during the snapshot marks the next one dirty again
    const shot = await takeSnapshot(paths, { maxFileBytes: options.maxFileBytes, previousTree: lastTree, ...(changed ? { only: changed } : {}) });
    for (const path of shot.tooLarge) options.warn?.(`checkpoints: ${path} is larger than checkpoints.maxFileBytes (${options.maxFileBytes} bytes) and is not kept; undo cannot restore it`);
    for (const path of shot.unreadable) options.warn?.(`checkpoints: ${path} could not be read and is not kept`);
    lastChanges = { from: lastTree, to: shot.tree, changes: shot.changes };
    lastTree = shot.tree;
    return shot.tree;
  };
  /**
   * The tree now: the last one when the watcher saw no change; a snapshot of the paths it saw
   * change when it knows them all; else a snapshot of the whole workspace.
   */
  const current = async (): Promise<string> => {
    if (lastTree === undefined || !watcher) return snapshotLocked();
    const changed = await watcher.changes();
    if (changed && changed.size === 0) return lastTree;
    return snapshotLocked(changed);
  };

  const recordBefore = async (id: string, subject: CheckpointSubject, tree: string): Promise<void> => {
    await keepTree(paths.place, `before/${id}`, tree);
    appendRecord(paths.records, {
      v: 1, kind: 'before', id, at: clock().toISOString(), runId: subject.runId, sessionId: subject.sessionId,
      participantId: subject.participantId, toolUseIds: [...subject.toolUseIds], toolNames: [...subject.toolNames],
      turn: subject.turn, tree, ...(subject.restoreOf ? { restoreOf: subject.restoreOf } : {}),
    });
  };
  const recordAfter = async (id: string, before: string, after: string): Promise<FileChange[]> => {
    const reuse = lastChanges && lastChanges.from === before && lastChanges.to === after;
    const files = reuse ? [...lastChanges!.changes] : await diffTrees(paths.place, before, after);
    await keepTree(paths.place, `after/${id}`, after);
    appendRecord(paths.records, { v: 1, kind: 'after', id, at: clock().toISOString(), tree: after, files });
    return files;
  };

  return {
    paths,
    lock,
    whenWatching,
    snapshotLocked,
    async begin(subject) {
      const id = newCheckpointId(clock());
      const tree = await lock.run(async () => {
        const before = await current();
        await recordBefore(id, subject, before);
        return before;
      });
      return { id, tree, finish: () => lock.run(async () => recordAfter(id, tree, await current())) };
    },
    async restoreLocked(subject, expectedTree, apply) {
      const now = await snapshotLocked();
      if (now !== expectedTree) return { ok: false, error: 'the workspace changed since the diff was made; look at the diff again' };
      const id = newCheckpointId(clock());
      await recordBefore(id, subject, now);
      try {
        await apply();
      } finally {
        await recordAfter(id, now, await snapshotLocked());
      }
      return { ok: true, id };
    },
    async list() {
      const read = await readCheckpoints(paths.records);
      for (const issue of read.issues) options.warn?.(`checkpoints: ${issue}`);
      return read.checkpoints;
    },
    close() {
      closed = true;
      watcher?.close();
    },
  };
}

/** Directories git ignores in the workspace (not watched: what changes there is never snapshotted). */
async function ignoredDirs(paths: CheckpointPaths): Promise<Set<string>> {
  const result = await runGit(paths.place, ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory']);
  const dirs = new Set<string>();
  if (!result.ok) return dirs;
  for (const entry of result.stdout.toString('utf8').split('\0')) {
    if (entry.endsWith('/')) dirs.add(entry.slice(0, -1));
  }
  return dirs;
}
