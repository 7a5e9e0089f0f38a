import { closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { PRIVATE_FILE_MODE } from './private-mode';
import { surelyAbsent } from './absent';

/**
 * The one lock-file discipline of `.legion/` (the run lock, the checkpoint repository's lock,
 * `serve.json`). Its promise:
 * - a lock file appears with its whole content: the text is written to a private file beside
 *   it which is then hard-linked into place (`link` fails when the target exists, atomically),
 *   so a reader never sees an empty or half-written lock. Only where the file system has no
 *   hard links does creation fall back to `open(O_EXCL)` then write, and a reader may see it
 *   empty for that moment (callers give an unreadable lock a grace period or treat it as stale);
 * - a lock is removed only if it still holds what the remover judged (stale, or its own): under
 *   a breaker file that removers take in turn, it is renamed aside, compared, and put back when
 *   another process had replaced it meanwhile. No plain `unlink` of a lock judged earlier.
 */

/** Whether a process of this host is alive (a zombie counts as dead). */
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

/** A token telling one acquisition apart from another by the same process. */
export function lockToken(): string {
  return randomBytes(6).toString('hex');
}

/**
 * Create `file` (0600) holding `text` only if it does not exist. False: it exists. Throws what
 * the file system says otherwise (ENOENT: its folder is missing).
 */
export function createLockFile(file: string, text: string): boolean {
  const staging = `${file}.${process.pid}.${lockToken()}.tmp`;
  const fd = openSync(staging, 'w', PRIVATE_FILE_MODE);
  try { writeSync(fd, text); } finally { closeSync(fd); }
  try {
    linkSync(staging, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EOPNOTSUPP') throw error;
  } finally {
    try { unlinkSync(staging); } catch { /* gone */ }
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

/** The lock's text, or undefined when there is none. */
export function readLockFile(file: string): string | undefined {
  if (surelyAbsent(file)) return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export type Removal = 'removed' | 'changed' | 'missing';

/**
 * Remove `file` if it still holds `judged` (the text read when it was judged stale, or the
 * holder's own text on release): `changed` when another process had replaced it (left in
 * place), `missing` when it is gone. Never throws.
 *
 * Removers take turns through a breaker file (`<file>.break`, made like a lock, held for the
 * moment of one comparison), and a lock is compared before it is moved: otherwise, of three
 * processes taking over the same stale lock, one could move aside the lock a second had just
 * made, and a third create its own while it was away — two holders. Another remover's breaker is waited for (up to 2 s, then `changed`: nothing
 * removed); a breaker whose process is dead (killed in that moment), or unreadable for over 2 s,
 * is removed. Only a second remover breaking such a breaker at the same instant reopens the race.
 */
export function removeLockIfUnchanged(file: string, judged: string): Removal {
  const breaker = takeBreaker(file);
  if (breaker === 'missing') return 'missing';
  if (breaker === 'busy') return 'changed';
  try {
    return moveAsideIfUnchanged(file, judged);
  } finally {
    try { unlinkSync(breaker); } catch { /* gone */ }
  }
}

/**
 * Under the breaker: compare first, so a live lock is never moved (a creator would take its
 * place while it is away); then rename aside, compare again, and put it back when it is not what
 * was judged (only reached when a broken breaker let two removers in).
 */
function moveAsideIfUnchanged(file: string, judged: string): Removal {
  let now: string | undefined;
  try { now = readLockFile(file); } catch { return 'changed'; }
  if (now === undefined) return 'missing';
  if (now !== judged) return 'changed';
  const aside = `${file}.aside.${process.pid}.${lockToken()}`;
  try {
    renameSync(file, aside);
  } catch {
    return 'missing';
  }
  let moved: string | undefined;
  try { moved = readFileSync(aside, 'utf8'); } catch { /* vanished */ }
  let result: Removal = 'removed';
  if (moved !== judged) {
    result = 'changed';
    try { linkSync(aside, file); } catch { /* a third process took the place; it holds the lock now */ }
  }
  try { unlinkSync(aside); } catch { /* gone */ }
  return result;
}

const BREAKER_WAIT_MS = 2_000;
/** Made at the first wait, not at load: the start-up snapshot has no SharedArrayBuffer. */
let pause: Int32Array | undefined;

/** The breaker's path once this process holds it; `missing` when the lock's folder is gone; `busy` after waiting. */
function takeBreaker(file: string): string | 'missing' | 'busy' {
  const path = `${file}.break`;
  const text = `${process.pid} ${lockToken()}\n`;
  const deadline = Date.now() + BREAKER_WAIT_MS;
  for (;;) {
    try {
      if (createLockFile(path, text)) return path;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'busy';
    }
    let seen: string | undefined;
    try { seen = readLockFile(path); } catch { /* unreadable: waited for */ }
    if (seen !== undefined && breakerIsStale(path, seen)) {
      try { if (readLockFile(path) === seen) unlinkSync(path); } catch { /* gone */ }
      continue;
    }
    if (Date.now() > deadline) return 'busy';
    pause ??= new Int32Array(new SharedArrayBuffer(4));
    Atomics.wait(pause, 0, 0, 1); // held for a comparison's time: look again in 1 ms
  }
}

function breakerIsStale(path: string, text: string): boolean {
  const pid = Number(text.split(' ', 1)[0]);
  if (Number.isInteger(pid) && pid > 0) return !pidIsAlive(pid);
  try {
    return Date.now() - statSync(path).mtimeMs > BREAKER_WAIT_MS;
  } catch {
    return false;
  }
}
