import { writeFileSync, linkSync, readFileSync, unlinkSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pidIsAlive } from '../session/lock';

/**
 * One writer at a time on the shadow repository: within a process a promise chain, across
 * processes (the TUI and `legion undo` in another terminal) a lock file holding the pid. A lock
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
        await acquire(options);
        try {
          return await work();
        } finally {
          try { unlinkSync(options.lockFile); } catch { /* already gone */ }
        }
      });
      tail = next.catch(() => undefined);
      return next;
    },
  };
}

async function acquire(options: RepoLockOptions): Promise<void> {
  const isAlive = options.isAlive ?? pidIsAlive;
  const deadline = Date.now() + (options.waitMs ?? 15_000);
  for (;;) {
    if (tryCreate(options.lockFile)) return;
    const holder = Number.parseInt(readText(options.lockFile), 10);
    // An empty file may be a holder between creating and writing it: stale only once old.
    const unwritten = !Number.isInteger(holder) || holder <= 0;
    if ((unwritten && ageMs(options.lockFile) > 2_000) || (!unwritten && (holder === process.pid || !isAlive(holder)))) {
      // Stale: its process died mid-operation. Clear what git left locked, then take over.
      clearGitLocks(options.gitDir);
      try { unlinkSync(options.lockFile); } catch { /* raced with another taker */ }
      continue;
    }
    if (Date.now() > deadline) throw new Error(`the checkpoint repository is busy (process ${holder} holds ${options.lockFile})`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Create the lock file with the pid already in it: written beside, then hard-linked into place
 * (link fails when the lock exists, atomically), so a SIGKILL never leaves an empty lock.
 * False when another holder has it.
 */
function tryCreate(lockFile: string): boolean {
  const staging = `${lockFile}.${process.pid}.tmp`;
  writeFileSync(staging, String(process.pid), { mode: 0o600 });
  try {
    linkSync(staging, lockFile);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  } finally {
    try { unlinkSync(staging); } catch { /* already gone */ }
  }
}

function ageMs(file: string): number {
  try { return Date.now() - statSync(file).mtimeMs; } catch { return 0; }
}

function readText(file: string): string {
  try { return readFileSync(file, 'utf8'); } catch { return ''; }
}

/** Lock files a killed git leaves: only ever removed while holding the repository lock of a dead holder. */
export function clearGitLocks(gitDir: string): void {
  for (const name of ['index.lock', 'HEAD.lock', 'packed-refs.lock', 'config.lock', 'shallow.lock']) {
    rmSync(join(gitDir, name), { force: true });
  }
}
