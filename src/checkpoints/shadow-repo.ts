import { existsSync } from 'node:fs';
import { mkdir, writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit, type GitPlace } from './git';

/**
 * Where the checkpoints of a workspace live: `.legion/checkpoints/` (docs/undo.md), or `dir` when
 * given (an isolated session's worktree keeps them outside itself, docs/worktrees.md#checkpoints-and-undo).
 */
export interface CheckpointPaths {
  readonly dir: string;
  readonly place: GitPlace;
  /** One JSON line per checkpoint event (before / after / pruned), see records.ts. */
  readonly records: string;
  /** Held while a snapshot or restore runs (lock.ts). */
  readonly lock: string;
}

export function checkpointPaths(workspaceRoot: string, dir = join(workspaceRoot, '.legion', 'checkpoints')): CheckpointPaths {
  return {
    dir,
    place: { gitDir: join(dir, 'git'), workTree: workspaceRoot },
    records: join(dir, 'checkpoints.jsonl'),
    lock: join(dir, 'lock'),
  };
}

/**
 * Always left out of snapshots (the workspace's `.gitignore` rules apply too: git reads them from
 * the work tree). Every `.legion/`, a nested workspace's too (its web token; an undo would write
 * back rules it held before you trusted it). Files over the size limit are added to this list
 * while they stay too big (see snapshot.ts). A `.gitignore` outranks this file, so its
 * `!.legion/` would bring them back: `git add` is also given an exclude pathspec (snapshot.ts).
 */
export const FIXED_EXCLUDES = ['/.legion/', '/.git/', '.git', '.legion/'];
/** Bytes exactly as they are: no end-of-line conversion, filters or encodings from `.gitattributes`. */
const ATTRIBUTES = '* -text -filter -ident -working-tree-encoding -export-subst\n';

/** Create the shadow repository if missing (idempotent; safe after a crash half-way through). */
export async function ensureShadowRepo(paths: CheckpointPaths): Promise<void> {
  const { gitDir } = paths.place;
  if (!existsSync(join(gitDir, 'HEAD'))) {
    await mkdir(paths.dir, { recursive: true, mode: 0o700 });
    const made = await runGit(paths.place, ['init', '--quiet', '--shared=0600']);
    if (!made.ok) throw new Error(`could not create the checkpoint repository in ${gitDir}: ${made.error}`);
  }
  await mkdir(join(gitDir, 'info'), { recursive: true, mode: 0o700 });
  await writeIfChanged(join(gitDir, 'info', 'attributes'), ATTRIBUTES);
  const excludeFile = join(gitDir, 'info', 'exclude');
  if (!existsSync(excludeFile) || !(await readFile(excludeFile, 'utf8')).startsWith(FIXED_EXCLUDES.join('\n'))) {
    await writeFile(excludeFile, FIXED_EXCLUDES.join('\n') + '\n', { mode: 0o600 });
  }
  // The index format git keeps fast for `add -A` on large trees: untracked cache (directory mtimes).
  // Set once (a start that finds it set spawns no git).
  const config = await readFile(join(gitDir, 'config'), 'utf8').catch(() => '');
  if (!/untrackedCache = true/.test(config)) {
    for (const [key, value] of [['core.untrackedCache', 'true'], ['core.bare', 'false'], ['index.version', '4']] as const) {
      const set = await runGit(paths.place, ['config', key, value]);
      if (!set.ok) throw new Error(`could not configure the checkpoint repository: ${set.error}`);
    }
  }
}

async function writeIfChanged(file: string, text: string): Promise<void> {
  const current = await readFile(file, 'utf8').catch(() => undefined);
  if (current !== text) await writeFile(file, text, { mode: 0o600 });
}

/** The size-limit exclusions currently in `info/exclude` (paths relative to the workspace). */
export async function readLargeExcludes(paths: CheckpointPaths): Promise<string[]> {
  const text = await readFile(join(paths.place.gitDir, 'info', 'exclude'), 'utf8').catch(() => '');
  return text.split('\n').slice(FIXED_EXCLUDES.length).filter(Boolean).map(unescapeExclude);
}

export async function writeLargeExcludes(paths: CheckpointPaths, large: readonly string[]): Promise<void> {
  const lines = [...FIXED_EXCLUDES, ...large.map(escapeExclude)];
  await writeFile(join(paths.place.gitDir, 'info', 'exclude'), lines.join('\n') + '\n');
}

/** An exclude line matching exactly one workspace-relative path (glob characters escaped). */
function escapeExclude(path: string): string {
  return '/' + path.replace(/[\\*?[\]!#\s]/g, (c) => `\\${c}`);
}

function unescapeExclude(line: string): string {
  return line.slice(1).replace(/\\(.)/g, '$1');
}
