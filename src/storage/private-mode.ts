import { chmodSync, closeSync, constants as fsConstants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, type Stats } from 'node:fs';
import { join } from 'node:path';

/**
 * Legion's own files are private (docs/cli-conventions.md): `.legion/` and the user's config folder hold
 * transcripts, approvals, audit logs and configuration that may quote code and secrets.
 * Every folder Legion creates there is 0700 and every file 0600, whatever the umask; a
 * writer that creates a file or folder passes these modes.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Bits that give a group or others any access. */
const SHARED_BITS = 0o077;

export interface TightenReport {
  /** Paths whose group/other bits were removed. */
  readonly tightened: string[];
  /** Paths that still give others access (chmod refused, e.g. another user's file). */
  readonly failed: { path: string; error: string }[];
}

/** The file system calls the walk makes (a fake in tests, `sharedPaths` records instead of changing modes). */
export interface TightenDeps {
  readonly lstat: (path: string) => Promise<{ readonly mode: number; isSymbolicLink(): boolean; isDirectory(): boolean }>;
  readonly readdir: (path: string) => Promise<string[]>;
  readonly chmod: (path: string, mode: number) => Promise<void>;
}

/**
 * The real file system through synchronous calls, each answered at once: this walk runs at
 * every start, before the first frame, over every file under `.legion/` (runs, sessions,
 * checkpoints), and a promise-based call per entry costs ~4× the CPU and far more time (each
 * a round trip through libuv's thread pool; 870 entries: 36 → 11 ms, loaded machine;
 * docs/performance.md#start-up).
 */
const realFs: TightenDeps = {
  lstat: async (path) => lstatSync(path),
  readdir: async (path) => readdirSync(path),
  chmod: async (path, mode) => chmodSync(path, mode),
};

/**
 * Remove group and other permission bits from `root` and everything under it (folders
 * become at most 0700, files at most 0600 or 0700). Symbolic links are neither followed
 * nor changed; a missing root is nothing to do. Reports what changed and what could not.
 */
export async function tightenTree(root: string, deps: TightenDeps = realFs, leave: ReadonlySet<string> = new Set()): Promise<TightenReport> {
  const report: TightenReport = { tightened: [], failed: [] };
  await visit(root, deps, report, true, leave);
  return report;
}

async function visit(path: string, deps: TightenDeps, report: TightenReport, isRoot: boolean, leave: ReadonlySet<string>): Promise<void> {
  if (leave.has(path)) return;
  let mode: number;
  let isDir: boolean;
  try {
    const stats = await deps.lstat(path);
    if (stats.isSymbolicLink()) return;
    mode = stats.mode & 0o7777;
    isDir = stats.isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // gone meanwhile (or no root)
    report.failed.push({ path, error: (error as Error).message });
    return;
  }
  if (mode & SHARED_BITS) {
    try {
      await deps.chmod(path, mode & ~SHARED_BITS);
      report.tightened.push(path);
    } catch (error) {
      report.failed.push({ path, error: (error as NodeJS.ErrnoException).code ?? (error as Error).message });
    }
  }
  if (!isDir) return;
  let names: string[];
  try {
    names = await deps.readdir(path);
  } catch (error) {
    if (!isRoot || (error as NodeJS.ErrnoException).code !== 'ENOENT') report.failed.push({ path, error: (error as Error).message });
    return;
  }
  for (const name of names) await visit(join(path, name), deps, report, false, leave);
}

/** Paths under `root` (root included) that give a group or others any access: for `legion doctor`. */
export async function sharedPaths(root: string, deps: Pick<TightenDeps, 'lstat' | 'readdir'> = realFs): Promise<string[]> {
  const found: string[] = [];
  const noChmod: TightenDeps = { ...deps, chmod: async (path) => void found.push(String(path)) };
  await tightenTree(root, noChmod);
  return found;
}

/** The one start notice for a tightened tree, or null when nothing changed or failed. */
export function tightenNotice(root: string, report: TightenReport): string | null {
  const parts: string[] = [];
  if (report.tightened.length > 0) {
    parts.push(`made ${report.tightened.length} file(s) and folder(s) in ${root} private (owner only: folders 0700, files 0600)`);
  }
  if (report.failed.length > 0) {
    const first = report.failed[0]!;
    parts.push(`${report.failed.length} path(s) in ${root} stay readable by others (first: ${first.path}: ${first.error}); fix with chmod -R go-rwx ${root}`);
  }
  return parts.length > 0 ? parts.join('; ') : null;
}

/** The user's global config folder: `$XDG_CONFIG_HOME/legion`, else `~/.config/legion`. */
export function userConfigDir(env: Readonly<Record<string, string | undefined>>, home: string): string {
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'legion');
}

/**
 * At start: tighten each existing root (`.legion/`, the user's config folder) and return the
 * one notice saying what changed or could not, or null when everything was already private.
 * `leave`: paths never chmodded, because a shared mode there is evidence to keep, not to repair
 * (the workspace-trust key: once others could read it, every marker may be forged, so it stays
 * refused until the user removes it, docs/workspace-trust.md).
 */
export async function tightenOnStart(roots: readonly string[], leave: ReadonlySet<string>, deps: TightenDeps = realFs): Promise<string | null> {
  const notices: string[] = [];
  for (const root of roots) {
    const notice = tightenNotice(root, await tightenTree(root, deps, leave));
    if (notice) notices.push(notice);
  }
  return notices.length > 0 ? notices.join('; ') : null;
}

/**
 * `dir` exists, is a folder of this user's, and is 0700 (made so; thrown otherwise): what it
 * holds is then out of other users' reach whatever modes its files have (the local engine's
 * sockets and keys, docs/engine.md#who-may-talk-to-what). Another user's folder is an error:
 * its owner could swap what is in it.
 */
export function ensurePrivateFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) throw new Error(`${dir} is not a folder`);
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) throw new Error(`${dir} belongs to another user (uid ${stat.uid}): Legion's engine files must be yours`);
  if ((stat.mode & 0o777) !== PRIVATE_DIR_MODE) chmodSync(dir, PRIVATE_DIR_MODE);
}

/** Why a private file was refused (readPrivateFile). */
export type PrivateFileRefusal = 'not-a-file' | 'another-user' | 'open-to-others' | 'too-large' | 'unreadable';

export type PrivateFileRead =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly missing: true }
  | { readonly ok: false; readonly missing: false; readonly refusal: PrivateFileRefusal; readonly message: string };

export interface PrivateFileRules {
  /**
   * The mode bits that must be clear: `0o077` (the default) for a secret no one else may read or
   * change (a key, a token); `0o022` for a file others may read but must not change.
   */
  readonly openBits?: number;
  /** Larger files are refused unread. */
  readonly maxBytes?: number;
  /**
   * The owner it must have, when not this process's user (the default; none where the platform
   * has no uids). An absent or undefined value means the default, never no check.
   */
  readonly uid?: number;
}

/**
 * Read a file of Legion's that only its user may control (the workspace-trust key and registry,
 * the engine's feed token and signing key): `readRegularFile`, and owned by this user, with none
 * of `openBits` set. No file (or no folder): `missing`. Anything else is a refusal with one line
 * naming the file; the caller says what follows (docs/cli-conventions.md#private-files).
 */
export function readPrivateFile(path: string, rules: PrivateFileRules = {}): PrivateFileRead {
  return readRegularFile(path, rules.maxBytes, (stats) => {
    const uid = rules.uid ?? process.getuid?.();
    if (uid !== undefined && stats.uid !== uid) return { refusal: 'another-user', message: `${path} belongs to another user (uid ${stats.uid})` };
    const openBits = rules.openBits ?? SHARED_BITS;
    if ((stats.mode & openBits) !== 0) {
      const what = (openBits & 0o044) !== 0 ? 'readable or writable' : 'writable';
      return { refusal: 'open-to-others', message: `${path} is ${what} by others (mode ${(stats.mode & 0o777).toString(8)})` };
    }
    return undefined;
  });
}

/**
 * Read a regular file, checked on the open file itself, so that what is checked is what is read:
 * not a link (opened without following one) nor a FIFO or device (opened without waiting), passing
 * `check` (owner, mode), at most `maxBytes` (refused unread when larger; one byte more is read,
 * so a file that grew after its check is refused as well). For files another process could have
 * planted or swapped: Legion's private files above, a workspace's trust marker.
 */
export function readRegularFile(path: string, maxBytes: number | undefined, check: (stats: Stats) => { refusal: PrivateFileRefusal; message: string } | undefined = () => undefined): PrivateFileRead {
  const refuse = (refusal: PrivateFileRefusal, message: string): PrivateFileRead => ({ ok: false, missing: false, refusal, message });
  let fd: number;
  try {
    fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: false, missing: true };
    if (code === 'ELOOP') return refuse('not-a-file', `${path} is not a regular file (a symbolic link)`);
    return refuse('unreadable', `${path}: ${(error as Error).message}`);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return refuse('not-a-file', `${path} is not a regular file`);
    const refused = check(stats);
    if (refused) return refuse(refused.refusal, refused.message);
    if (maxBytes === undefined) return { ok: true, text: readFileSync(fd, 'utf8') };
    const tooLarge = (): PrivateFileRead => refuse('too-large', `${path} is larger than ${maxBytes} bytes`);
    if (stats.size > maxBytes) return tooLarge();
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (let n; length < buffer.length && (n = readSync(fd, buffer, length, buffer.length - length, null)) > 0; ) length += n;
    if (length > maxBytes) return tooLarge();
    return { ok: true, text: buffer.toString('utf8', 0, length) };
  } catch (error) {
    return refuse('unreadable', `${path}: ${(error as Error).message}`);
  } finally {
    closeSync(fd);
  }
}
