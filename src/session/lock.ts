import { createLockFile, lockToken, pidIsAlive, readLockFile, removeLockIfUnchanged } from '../storage/lock-file';
import type { Layout } from '../storage/layout';
import type { LockHolder, LockResult, RunLock } from './types';

export interface LockRequest {
  readonly pid: number;
  readonly hostname: string;
  readonly now: Date;
  /** Whether a pid of this host is alive; default `process.kill(pid, 0)`. */
  readonly isAlive?: (pid: number) => boolean;
}

interface LockContent extends LockHolder {
  /** Tells this acquisition apart from another by the same pid. */
  readonly token: string;
}

type Observed = { kind: 'missing' } | { kind: 'garbage'; raw: string } | { kind: 'held'; raw: string; holder: LockContent };

function observe(file: string): Observed {
  const raw = readLockFile(file);
  if (raw === undefined) return { kind: 'missing' };
  try {
    const value = JSON.parse(raw) as Partial<LockContent>;
    if (Number.isInteger(value.pid) && (value.pid as number) > 0 && typeof value.hostname === 'string' && typeof value.startedAt === 'string') {
      return { kind: 'held', raw, holder: value as LockContent };
    }
  } catch { /* garbage */ }
  return { kind: 'garbage', raw };
}

function since(startedAt: string): string {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.test(startedAt) ? `${startedAt.slice(0, 19).replace('T', ' ')} UTC` : startedAt;
}

/**
 * Take the exclusive right to drive run `runId`: `runs/<runId>/lock` holding
 * `{ pid, hostname, startedAt }`. Held by a live process of this host (this one included)
 * → refused with a message saying what to do. Held by a process of another host → refused
 * (its liveness cannot be checked). Held by a dead pid, or unreadable → stale: moved aside
 * atomically and replaced, with `recovered: true`. Synchronous, so exit paths can use it.
 */
export function acquireRunLock(layout: Layout, runId: string, request: LockRequest): LockResult {
  const file = layout.runLock(runId);
  const isAlive = request.isAlive ?? pidIsAlive;
  const token = lockToken();
  const mine: LockContent = { pid: request.pid, hostname: request.hostname, startedAt: request.now.toISOString(), token };
  const text = JSON.stringify(mine) + '\n';
  let recovered = false;
  let previous: LockHolder | undefined;
  for (let attempt = 0; attempt < 8; attempt++) {
    try {
      if (createLockFile(file, text)) return { ok: true, lock: heldLock(file, text), ...(recovered ? { recovered, previous } : {}) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: false, error: `run ${runId} does not exist (${layout.runDir(runId)})` };
      throw error;
    }
    const seen = observe(file);
    if (seen.kind === 'missing') continue;
    if (seen.kind === 'held') {
      const { pid, hostname, startedAt } = seen.holder;
      if (hostname !== request.hostname) {
        return { ok: false, error: `run ${runId} is in use by another Legion (pid ${pid} on host ${hostname}, since ${since(startedAt)}): open it read-only with \`legion show\`, or start a new run with --new; if that Legion is gone, delete ${file}` };
      }
      if (isAlive(pid)) {
        return { ok: false, error: `run ${runId} is in use by another Legion (pid ${pid}, since ${since(startedAt)}): open it read-only with \`legion show\`, or start a new run with --new` };
      }
    }
    // Stale: removed only if it still holds what was judged (storage/lock-file.ts).
    if (removeLockIfUnchanged(file, seen.raw) === 'removed') {
      recovered = true;
      previous = seen.kind === 'held' ? { pid: seen.holder.pid, hostname: seen.holder.hostname, startedAt: seen.holder.startedAt } : undefined;
    }
  }
  return { ok: false, error: `run ${runId}: could not take the lock ${file} (it keeps changing hands); try again` };
}

function heldLock(file: string, text: string): RunLock {
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      // Only removed while it is still ours (a stale-lock takeover may have replaced it).
      // Never throws (exit paths call it).
      removeLockIfUnchanged(file, text);
    },
  };
}

/**
 * Release `lock` when the process exits (the `exit` event, which runs synchronous code only;
 * a SIGKILL leaves a stale lock that the next start recovers). Returns the unregister
 * function. The composition root decides whether to call it.
 */
export function releaseOnExit(lock: RunLock, target: Pick<NodeJS.Process, 'on' | 'off'> = process): () => void {
  const handler = (): void => lock.release();
  target.on('exit', handler);
  return () => void target.off('exit', handler);
}
