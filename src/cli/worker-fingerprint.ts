import { readdirSync, statSync, type Dirent } from 'node:fs';
import { homedir } from 'node:os';
import { join, sep } from 'node:path';
import { layoutFor } from '../storage/layout';

/**
 * What a worker's kept core was built from (docs/engine.md#a-turn-on-a-worker): each file's
 * inode, size and mtime (ns) by path — every session file of the run, the run's approvals and
 * todos, the worktree records and merge diffs (not run.json: its title and time are not what a turn runs on; not usage.json: the hub
 * rewrites it after every turn and a worker reads it each turn, worker-usage.ts), the
 * workspace's `.legion/` files (config, rules, prices, MCP), the participants and agent files,
 * the user's Legion config dir. Two equal fingerprints: none of those files changed in between
 * (a file rewritten or appended changes its mtime or inode). Taken at every turn's start:
 * synchronous (a few dozen stats, quicker than as many trips through libuv's thread pool on a
 * busy machine), a missing file or folder read without an exception, kept as a map so a turn
 * compares and restamps it entry by entry.
 */
export type Fingerprint = ReadonlyMap<string, string>;

/** A named file that does not exist (the approvals or todos of a run that has none yet). */
const ABSENT = '-';

export function workspaceFingerprint(workspaceRoot: string, runId: string, env: Readonly<Record<string, string | undefined>>): Fingerprint {
  const layout = layoutFor(workspaceRoot);
  const userDir = join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'legion');
  const out = new Map<string, string>();
  filesOf(layout.sessionsDir(runId), out);
  for (const file of [layout.approvals(runId), layout.todos(runId)]) out.set(file, stampOf(file) ?? ABSENT);
  filesOf(layout.legionDir, out);
  // The worktree records (docs/worktrees.md): a delegate's worktree prepared by its caller's
  // core, or merged by its own, changes where that session's tools act.
  filesOf(layout.worktreesDir, out);
  filesOf(layout.participantsDir, out);
  filesOf(join(layout.legionDir, 'agents'), out);
  filesOf(userDir, out);
  filesOf(join(userDir, 'agents'), out);
  return out;
}

/** `file`'s inode, size and mtime (ns); undefined when it does not exist (or cannot be read). */
function stampOf(file: string): string | undefined {
  try {
    const s = statSync(file, { bigint: true, throwIfNoEntry: false });
    return s ? `${s.ino} ${s.size} ${s.mtimeNs}` : undefined;
  } catch {
    return undefined; // not readable: as absent
  }
}

/** The files directly in `dir`, each with its stamp, into `out`; a missing dir holds none. */
function filesOf(dir: string, out: Map<string, string>): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = `${dir}${sep}${entry.name}`; // the layout's folders are normal paths: what join gives, without its normalizing
    const stamp = stampOf(file);
    if (stamp !== undefined) out.set(file, stamp);
  }
}

/**
 * `fingerprint` with `file`'s entry as the file is now (added if it was not there, left out if
 * the file is gone, as a full scan lists it): what a turn's end records of the session file it
 * wrote (docs/engine.md#a-turn-on-a-worker), one stat instead of a scan of every file. Another
 * file written meanwhile keeps its old entry, so the next turn's scan still sees it changed.
 */
export function restamped(fingerprint: Fingerprint, file: string): Fingerprint {
  const out = new Map(fingerprint);
  const now = stampOf(file);
  if (now === undefined) out.delete(file);
  else out.set(file, now);
  return out;
}

/**
 * The files whose entries differ between two fingerprints, those in `except` left out (the
 * session files of the turns a core runs: it writes them itself and holds them in memory).
 */
export function changedFiles(a: Fingerprint, b: Fingerprint, except: ReadonlySet<string>): string[] {
  const changed: string[] = [];
  for (const [file, stamp] of a) if (b.get(file) !== stamp && !except.has(file)) changed.push(file);
  for (const file of b.keys()) if (!a.has(file) && !except.has(file)) changed.push(file);
  return changed;
}
