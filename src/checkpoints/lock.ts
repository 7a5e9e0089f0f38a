import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLockFile, lockToken, pidIsAlive, readLockFile, removeLockIfUnchanged } from '../storage/lock-file';

/**
 * One writer at a time on the shadow repository: within a process a promise chain, across
 * processes (the TUI and `legion undo` in another terminal) a lock file holding the pid (made and
 * removed as storage/lock-file.ts promises). A lock
 * whose process is gone is stale (a crash or SIGKILL mid-snapshot): it is taken over, and the
 * lock files git itself left behind (`index.lock`, ref locks) are removed, so the repository
 * stays usable. A live holder is waited for up to `waitMs`.
 */
export interface RepoLock {
  run<T>(work: () => Promise<T>): Promise<T>;
}

export interface RepoLockOptions {
  readonly lockFile: string;
  readonly gitDir: string;
  readonly waitMs?: number;
  readonly isAlive?: (pid: number) => boolean;
}

export function createRepoLock(options: RepoLockOptions): RepoLock {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    run<T>(work: () => Promise<T>): Promise<T> {
      const next = tail.then(async () => {
        const mine = await acquire(options);
        try {
          return await work();
        } finally {
          removeLockIfUnchanged(options.lockFile, mine);
        }
      });
      tail = next.catch(() => undefined);
      return next;
    },
  };
}

/** Take the lock; returns the text it holds (the pid, then a token for this acquisition). */
async function acquire(options: RepoLockOptions): Promise<string> {
  const isAlive = options.isAlive ?? pidIsAlive;
  const deadline = Date.now() + (options.waitMs ?? 15_000);
  const mine = `${process.pid}\n${lockToken()}\n`;
  for (;;) {
    if (createLockFile(options.lockFile, mine)) return mine;
    const seen = readLockFile(options.lockFile);
    if (seen === undefined) continue;
    const holder = Number.parseInt(seen, 10);
    // Unreadable: a holder on a file system without hard links between creating and writing
    // it (storage/lock-file.ts): stale only once old.
    const unwritten = !Number.isInteger(holder) || holder <= 0;
    if ((unwritten && ageMs(options.lockFile) > 2_000) || (!unwritten && (holder === process.pid || !isAlive(holder)))) {
      // Stale: its process died mid-operation. Clear what git left locked while the stale lock
      // still keeps others out, then take over.
      clearGitLocks(options.gitDir);
      removeLockIfUnchanged(options.lockFile, seen);
      continue;
    }
    if (Date.now() > deadline) throw new Error(`the checkpoint repository is busy (process ${holder} holds ${options.lockFile})`);
    await sleep(25);
  }
}

function ageMs(file: string): number {
  try { return Date.now() - statSync(file).mtimeMs; } catch { return 0; }
}

/** Lock files a killed git leaves: only ever removed while holding the repository lock of a dead holder. */
export function clearGitLocks(gitDir: string): void {
  for (const name of ['index.lock', 'HEAD.lock', 'packed-refs.lock', 'config.lock', 'shallow.lock']) {
    rmSync(join(gitDir, name), { force: true });
  }
}
