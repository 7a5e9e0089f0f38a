import { closeSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { PRIVATE_FILE_MODE } from '../storage/private-mode';
import type { Layout } from '../storage/layout';
import { randomIds } from './ids';
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

export function pidIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

/**
 * A killed process its parent has not reaped yet (a detached `legion serve` under an init
 * that does not reap) still answers `kill(pid, 0)`; Linux shows it as state Z in /proc.
 */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const end = stat.lastIndexOf(')');
    return stat.slice(end + 2, end + 3) === 'Z';
  } catch {
    return false;
  }
}

type Observed = { kind: 'missing' } | { kind: 'garbage'; raw: string } | { kind: 'held'; raw: string; holder: LockContent };

function observe(file: string): Observed {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw error;
  }
  try {
    const value = JSON.parse(raw) as Partial<LockContent>;
    if (Number.isInteger(value.pid) && (value.pid as number) > 0 && typeof value.hostname === 'string' && typeof value.startedAt === 'string') {
      return { kind: 'held', raw, holder: value as LockContent };
    }
  } catch { /* garbage */ }
  return { kind: 'garbage', raw };
}

/**
 * Create `file` with `text` only if it does not exist, complete on appearance: the content
 * is written to a temp file which is then hard-linked into place (`link` fails if the
 * target exists), so a reader never sees an empty lock being written. Where hard links
 * are unsupported, falls back to `open(file, 'wx')`.
 */
function createExclusive(file: string, text: string, token: string): boolean {
  const tmp = `${file}.${process.pid}.${token}.tmp`;
  const fd = openSync(tmp, 'w', PRIVATE_FILE_MODE);
  try { writeSync(fd, text); } finally { closeSync(fd); }
  try {
    linkSync(tmp, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EOPNOTSUPP') throw error;
  } finally {
    try { unlinkSync(tmp); } catch { /* gone */ }
  }
  let fd2: number;
  try {
    fd2 = openSync(file, 'wx', PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try { writeSync(fd2, text); } finally { closeSync(fd2); }
  return true;
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
  const token = randomIds();
  const mine: LockContent = { pid: request.pid, hostname: request.hostname, startedAt: request.now.toISOString(), token };
  const text = JSON.stringify(mine) + '\n';
  let recovered = false;
  let previous: LockHolder | undefined;
  for (let attempt = 0; attempt < 8; attempt++) {
    try {
      if (createExclusive(file, text, token)) return { ok: true, lock: heldLock(file, token), ...(recovered ? { recovered, previous } : {}) };
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
    // Stale. Move it aside (atomic: of two processes only one moves a given file), then make
    // sure what was moved is what was judged stale; if another process had already replaced
    // it with a live lock, put that one back.
    const aside = `${file}.stale.${process.pid}.${token}`;
    try {
      renameSync(file, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    let moved: string | null = null;
    try { moved = readFileSync(aside, 'utf8'); } catch { /* vanished */ }
    if (moved !== seen.raw) {
      try { linkSync(aside, file); } catch { /* a third process took it; it holds the lock now */ }
    } else {
      recovered = true;
      previous = seen.kind === 'held' ? { pid: seen.holder.pid, hostname: seen.holder.hostname, startedAt: seen.holder.startedAt } : undefined;
    }
    try { unlinkSync(aside); } catch { /* gone */ }
  }
  return { ok: false, error: `run ${runId}: could not take the lock ${file} (it keeps changing hands); try again` };
}

function heldLock(file: string, token: string): RunLock {
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      try {
        const seen = observe(file);
        // Only remove the lock if it is still ours (a stale-lock takeover may have replaced it).
        if (seen.kind === 'held' && seen.holder.token === token) unlinkSync(file);
      } catch {
        // Unreadable or already gone: nothing of ours to remove. Never throws (exit paths call it).
      }
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
