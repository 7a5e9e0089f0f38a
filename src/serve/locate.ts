import { connect } from 'node:net';
import { statSync } from 'node:fs';
import { pidIsAlive, removeLockIfUnchanged } from '../storage/lock-file';
import { checkServerSocket, readServerInfo, removeSocket, serveInfoFile, type ServerInfo } from './discovery';

export type Located =
  | { readonly kind: 'none'; readonly recovered?: string }
  | { readonly kind: 'running'; readonly info: ServerInfo }
  /** serve.json names a socket this workspace's server could not have made: nothing connects, signals or removes anything. */
  | { readonly kind: 'refused'; readonly error: string };

export interface LocateDeps {
  readonly hostname: string;
  readonly isAlive?: (pid: number) => boolean;
  /** Whether something accepts connections on the socket. */
  readonly probe?: (socket: string) => Promise<boolean>;
  readonly now?: () => number;
  /** The user whose socket it must be (default: this process's uid). */
  readonly uid?: number;
}

/**
 * serve.json is claimed just before the socket listens (the run is composed first), so a
 * server whose socket has not answered this long after its claim is taken for dead (its pid
 * reused, or a zombie nobody reaped).
 */
const STARTING_GRACE_MS = 3_000;

/**
 * Is a server running for the workspace of `legionDir`? A `serve.json` whose process is gone
 * (a SIGKILLed server), or that is unreadable, or whose socket has not answered for a while,
 * is stale: it and its socket are removed (`recovered` says so; a serve.json replaced meanwhile by
 * a new server is left and looked at again) and the answer is `none`.
 * A server of another host (a shared disk) counts as running: it cannot be checked from here.
 * A `serve.json` naming a socket that is not this workspace's own, in its private directory,
 * owned by the user (`checkServerSocket`) is `refused`: a planted file never redirects a
 * front end, `legion stop`'s signal or the clean-up to something else.
 */
export async function locateServer(legionDir: string, deps: LocateDeps): Promise<Located> {
  const isAlive = deps.isAlive ?? pidIsAlive;
  const probe = deps.probe ?? probeSocket;
  const now = deps.now ?? Date.now;
  const seen = readServerInfo(legionDir);
  if (seen.kind === 'none') return { kind: 'none' };
  const file = serveInfoFile(legionDir);
  if (seen.kind === 'garbage') {
    if (ageMs(file, now) < STARTING_GRACE_MS) return { kind: 'none' };
    if (removeLockIfUnchanged(file, seen.raw) === 'changed') return locateServer(legionDir, deps);
    return { kind: 'none', recovered: `removed an unreadable ${file}` };
  }
  const { info } = seen;
  if (info.hostname !== deps.hostname) return { kind: 'running', info };
  const refused = checkServerSocket(info.socket, legionDir, deps.uid ?? process.getuid?.() ?? 0);
  if (refused !== null) {
    return { kind: 'refused', error: `refusing the server ${file} names: ${refused}; if no Legion server runs here, remove ${file}` };
  }
  if (isAlive(info.pid)) {
    if (await probe(info.socket)) return { kind: 'running', info };
    if (ageMs(file, now) < STARTING_GRACE_MS) return { kind: 'running', info };
  }
  // Removed only while it still names the dead server: a new server may have claimed it since.
  if (removeLockIfUnchanged(file, seen.raw) === 'changed') return locateServer(legionDir, deps);
  removeSocket(info.socket);
  return { kind: 'none', recovered: `the Legion server of this workspace (pid ${info.pid}) is gone: removed its stale ${file} and socket` };
}

function ageMs(file: string, now: () => number): number {
  try {
    return now() - statSync(file).mtimeMs;
  } catch {
    return Infinity;
  }
}

export function probeSocket(socket: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(socket);
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      s.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}
