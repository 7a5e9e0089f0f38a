import { createHash } from 'node:crypto';
import { mkdirSync, statSync, unlinkSync, chmodSync, lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { tmpdir } from 'node:os';
import { PRIVATE_DIR_MODE } from '../storage/private-mode';
import { createLockFile, readLockFile, removeLockIfUnchanged } from '../storage/lock-file';

/**
 * Where a workspace's server listens and how a front end finds it (docs/serve.md#files):
 * `.legion/serve.json` names the server (pid, host, socket, run) and is created exclusively and
 * whole (storage/lock-file.ts), so it is also the one-server-per-workspace lock. The socket is `.legion/serve.sock`, or —
 * when that path is too long for a Unix socket (about 100 bytes) — a name derived from the
 * workspace path in `$XDG_RUNTIME_DIR`, else in `<tmp>/legion-<uid>/` (created 0700).
 */
export const MAX_SOCKET_PATH_BYTES = 100;

export interface ServerInfo {
  readonly pid: number;
  readonly hostname: string;
  readonly socket: string;
  readonly runId: string;
  readonly startedAt: string;
  readonly version: string;
}

export const serveInfoFile = (legionDir: string): string => join(legionDir, 'serve.json');

/** The socket's name outside `.legion/` (a long workspace path): derived from the workspace's `.legion` path. */
export const outsideSocketName = (legionDir: string): string => `legion-${createHash('sha256').update(legionDir).digest('hex').slice(0, 16)}.sock`;

export function socketPathFor(legionDir: string, env: Readonly<Record<string, string | undefined>>, uid: number): string {
  const local = join(legionDir, 'serve.sock');
  if (Buffer.byteLength(local) <= MAX_SOCKET_PATH_BYTES) return local;
  const name = outsideSocketName(legionDir);
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime && isPrivateDir(runtime, uid) && Buffer.byteLength(join(runtime, name)) <= MAX_SOCKET_PATH_BYTES) return join(runtime, name);
  const dir = join(tmpdir(), `legion-${uid}`);
  return join(dir, name);
}

/** Make the socket's directory when it is the shared-tmp fallback: 0700 and ours, else refuse. */
export function prepareSocketDir(socket: string, legionDir: string, uid: number): string | null {
  if (socket.startsWith(legionDir)) return null;
  const dir = socket.slice(0, socket.lastIndexOf('/'));
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.uid !== uid) return `${dir} is not a directory of this user: the socket is not put there`;
    if ((st.mode & 0o077) !== 0) chmodSync(dir, PRIVATE_DIR_MODE);
    return null;
  } catch (error) {
    return `${dir}: ${(error as Error).message}`;
  }
}

/**
 * Before a front end connects to (or signals, or cleans up after) the server `serve.json`
 * names: is that socket one this workspace's server could have made? `serve.json` is a file in
 * the workspace — a checkout can carry one, anything running as the user can write one — so
 * its `socket` is checked, never trusted: it must be `.legion/serve.sock` or the workspace's own
 * `legion-<hash>.sock` name (docs/serve.md#files); its directory a real directory, owned by
 * the user, 0700 (nobody else can put or swap anything there); and the socket, when it exists,
 * a socket (not a symlink) owned by the user. Null when all hold, else the reason, one line.
 */
export function checkServerSocket(socket: string, legionDir: string, uid: number): string | null {
  const dir = dirname(socket);
  const name = basename(socket);
  const real = (path: string): string => {
    try {
      return realpathSync(path);
    } catch {
      return path;
    }
  };
  // The server and this client may spell the workspace differently (a symlinked --cwd): compare real paths too.
  const legionDirs = [legionDir, real(legionDir)];
  const expected = name === 'serve.sock'
    ? legionDirs.includes(dir) || legionDirs.includes(real(dir))
    : legionDirs.some((d) => name === outsideSocketName(d));
  if (!isAbsolute(socket) || !expected) return `${socket} is not this workspace's socket (${join(legionDir, 'serve.sock')} or …/${outsideSocketName(legionDir)})`;
  let st;
  try {
    st = lstatSync(dir);
  } catch (error) {
    return `${dir}: ${(error as Error).message}`;
  }
  if (!st.isDirectory()) return `${dir} is not a directory`;
  if (st.uid !== uid) return `${dir} belongs to uid ${st.uid}, not to this user (uid ${uid})`;
  if ((st.mode & 0o077) !== 0) return `${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)}; make it 700)`;
  try {
    st = lstatSync(socket);
  } catch {
    return null; // not there (yet, or any more): nothing to connect to, nothing that could be foreign
  }
  if (!st.isSocket()) return `${socket} is not a socket`;
  if (st.uid !== uid) return `${socket} belongs to uid ${st.uid}, not to this user (uid ${uid})`;
  return null;
}

function isPrivateDir(dir: string, uid: number): boolean {
  try {
    const st = statSync(dir);
    return st.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/** What serve.json holds; `raw` is its text, for removing it only while it still holds that. */
export type InfoRead = { kind: 'none' } | { kind: 'garbage'; raw: string } | { kind: 'server'; info: ServerInfo; raw: string };

export function readServerInfo(legionDir: string): InfoRead {
  let raw: string | undefined;
  try {
    raw = readLockFile(serveInfoFile(legionDir));
  } catch {
    return { kind: 'none' };
  }
  if (raw === undefined) return { kind: 'none' };
  try {
    const v = JSON.parse(raw) as Partial<ServerInfo>;
    if (Number.isInteger(v.pid) && typeof v.socket === 'string' && typeof v.runId === 'string' && typeof v.hostname === 'string') {
      return { kind: 'server', info: v as ServerInfo, raw };
    }
  } catch { /* garbage */ }
  return { kind: 'garbage', raw };
}

/** Create `serve.json` (0600, never visible empty) only if it does not exist. False: another server's file is there. */
export function claimServerInfo(legionDir: string, info: ServerInfo): boolean {
  return createLockFile(serveInfoFile(legionDir), JSON.stringify(info) + '\n');
}

/** Remove `serve.json` (if it still names `pid`) and the socket. Never throws. */
export function releaseServerInfo(legionDir: string, pid: number, socket: string): void {
  const seen = readServerInfo(legionDir);
  if (seen.kind === 'server' && seen.info.pid !== pid) return;
  if (seen.kind !== 'none') removeLockIfUnchanged(serveInfoFile(legionDir), seen.raw);
  removeSocket(socket);
}

export function removeSocket(socket: string): void {
  try {
    if (lstatSync(socket).isSocket()) unlinkSync(socket);
  } catch { /* gone */ }
}
