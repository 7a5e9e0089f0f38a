import { readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { layoutFor } from '../storage/layout';

/**
 * What a worker's kept core was built from (docs/engine.md#a-turn-on-a-worker), as one string of
 * each file's inode, size and mtime (ns): every session file of the run, the run's approvals and
 * todos, the worktree records and merge diffs (not run.json: its title and time are not what a turn runs on; not usage.json: the hub
 * rewrites it after every turn and a worker reads it each turn, worker-usage.ts), the
 * workspace's `.legion/` files (config, rules, prices, MCP), the participants and agent files,
 * the user's Legion config dir. Two equal fingerprints: none of those files changed in between
 * (a file rewritten or appended changes its mtime or inode). Synchronous: a few dozen stats,
 * quicker than as many trips through libuv's thread pool on a busy machine.
 */
export function workspaceFingerprint(workspaceRoot: string, runId: string, env: Readonly<Record<string, string | undefined>>): string {
  const layout = layoutFor(workspaceRoot);
  const userDir = join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'legion');
  const parts = [
    filesOf(layout.sessionsDir(runId)),
    ...[layout.approvals(runId), layout.todos(runId)].map(one),
    filesOf(layout.legionDir),
    // The worktree records (docs/worktrees.md): a delegate's worktree prepared by its caller's
    // core, or merged by its own, changes where that session's tools act.
    filesOf(layout.worktreesDir),
    filesOf(layout.participantsDir),
    filesOf(join(layout.legionDir, 'agents')),
    filesOf(userDir),
    filesOf(join(userDir, 'agents')),
  ];
  return parts.join('\n');
}

function one(file: string): string {
  try {
    const s = statSync(file, { bigint: true });
    return `${file} ${s.ino} ${s.size} ${s.mtimeNs}`;
  } catch {
    return `${file} - - -`; // three fields, as a present file's
  }
}

/** The files directly in `dir` (sorted), each as `one` says; a missing dir holds none. */
function filesOf(dir: string): string {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name).sort();
  } catch {
    return '';
  }
  return names.map((name) => one(join(dir, name))).join('\n');
}

/**
 * `fingerprint` with `file`'s line as the file is now (added if it was not there, left out if
 * the file is gone, as a full scan lists it): what a turn's end records of the session file it
 * wrote (docs/engine.md#a-turn-on-a-worker), one stat instead of a scan of every file. Another
 * file written meanwhile keeps its old line, so the next turn's scan still sees it changed.
 */
export function restamped(fingerprint: string, file: string): string {
  const now = one(file);
  const lines = fingerprint.split('\n').filter((line) => line && !line.startsWith(`${file} `));
  if (!now.endsWith(' - - -')) lines.push(now);
  return lines.join('\n');
}

/**
 * The files whose lines differ between two fingerprints, those in `except` left out (the session
 * files of the turns a core runs: it writes them itself and holds them in memory).
 */
export function changedFiles(a: string, b: string, except: ReadonlySet<string>): string[] {
  const fileOf = (line: string): string => line.slice(0, line.lastIndexOf(' ', line.lastIndexOf(' ', line.lastIndexOf(' ') - 1) - 1));
  const linesOf = (fp: string): Set<string> => new Set(fp.split('\n').filter((line) => line && !except.has(fileOf(line))));
  const [left, right] = [linesOf(a), linesOf(b)];
  const differ = [...left].filter((l) => !right.has(l)).concat([...right].filter((l) => !left.has(l)));
  return [...new Set(differ.map(fileOf))];
}
