import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GitPlace } from '../checkpoints/git';
import { git, gitOut } from './repo';

/** Identity of the commits isolation writes (on `legion/*` branches and as dangling snapshots only). */
export const LEGION_IDENTITY: Record<string, string> = {
  GIT_AUTHOR_NAME: 'Legion', GIT_AUTHOR_EMAIL: 'worktrees@legion.local',
  GIT_COMMITTER_NAME: 'Legion', GIT_COMMITTER_EMAIL: 'worktrees@legion.local',
};

export interface SnapshotSpec {
  /** The index to start from (its stat cache makes `git add -A` re-hash only changed files); absent: none. */
  readonly indexFrom?: string;
  /**
   * Use `indexFrom` itself rather than a copy (a worktree's own index: keeping it current keeps its
   * stat cache valid, so later snapshots do not re-hash files checked out in the same second).
   */
  readonly inPlace?: boolean;
  /**
   * Parent commit(s) of the snapshot commit. `HEAD` (of `place`) may be named as is: `commit-tree`
   * resolves it, saving a `rev-parse` process; an unborn HEAD (no commit yet) means no parent.
   */
  readonly parents: readonly string[];
  readonly message: string;
  /** Workspace path inside the repository (`''` or ending with `/`): its `.legion/` is left out. */
  readonly prefix: string;
  /**
   * Untracked files left out too, by workspace-relative path (repository-relative outside the workspace): the rules' secret
   * paths (a key the user never committed must not enter the repository, where the read-only
   * `git log -p --all` prints it to any agent). Null: none (a worktree's own work).
   */
  readonly leaveOut: ((workspacePath: string) => boolean) | null;
}

/**
 * Commit the work tree of `place` as it is (tracked changes, untracked files that are not
 * ignored, deletions) without touching its index: `git add -A` runs on a copy of the index in a
 * temporary file (`GIT_INDEX_FILE`; `inPlace`: on a worktree's own index), then `write-tree` and `commit-tree`. Returns the commit and
 * tree; no ref moves. No untracked `.legion/` (the workspace's, a nested one) is ever part of a snapshot, nor what `leaveOut` names.
 */
export async function snapshotCommit(place: GitPlace, spec: SnapshotSpec): Promise<{ commit: string; tree: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'legion-index-'));
  const index = spec.inPlace && spec.indexFrom ? spec.indexFrom : join(dir, 'index');
  try {
    if (spec.indexFrom && !spec.inPlace) await copyFile(spec.indexFrom, index).catch(() => undefined);
    const env = { GIT_INDEX_FILE: index, ...LEGION_IDENTITY };
    // `.legion/` left out as an ignore pattern (a pathspec naming an ignored folder makes `git add` fail),
    // the workspace's and every other one in the repository (a nested workspace's web token and
    // transcripts would land in objects every sandboxed command can read, and in the worktree).
    const excludes = join(dir, 'exclude');
    await writeFile(excludes, `/${spec.prefix}.legion/\n.legion/\n`);
    const secrets = spec.leaveOut ? await untrackedLeftOut(place, excludes, spec.prefix, spec.leaveOut) : [];
    // And as exclude pathspecs: a `.gitignore` of the work tree outranks the excludes file, so its
    // `!.legion/` or `!.env` (an agent can write one) would bring the web token, the audit log or a
    // secret into objects `git log -p --all` prints without asking.
    const pathspecs = [':/', NO_LEGION, ...secrets.map((path) => `:(top,exclude,literal)${path}`)];
    await gitOut(place, ['-c', `core.excludesFile=${excludes}`, 'add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'], { env, input: pathspecs.join('\0') });
    const tree = (await gitOut(place, ['write-tree'], { env })).trim();
    const commit = await commitTree(place, tree, spec.parents, spec.message, env);
    return { commit, tree };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every `.legion/` of the repository, in any case: never added to a snapshot, whatever the ignore rules say. */
const NO_LEGION = ':(top,exclude,glob,icase)**/.legion/**';

/** Every untracked, not ignored file of the repository that `leaveOut` names, by its path in the repository (one `ls-files` process). */
async function untrackedLeftOut(place: GitPlace, excludes: string, prefix: string, leaveOut: (workspacePath: string) => boolean): Promise<string[]> {
  const listed = await gitOut(place, ['-c', `core.excludesFile=${excludes}`, 'ls-files', '-z', '--others', '--exclude-standard']);
  // A file of the repository outside the workspace (a workspace in a folder of it) is committed
  // too: matched by its path in the repository (the patterns are `**/…`).
  return listed.split('\0').filter((path) => path !== '' && leaveOut(path.startsWith(prefix) ? path.slice(prefix.length) : path));
}

async function commitTree(place: GitPlace, tree: string, parents: readonly string[], message: string, env: Record<string, string>): Promise<string> {
  const made = await git(place, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', message], { env });
  if (made.ok) return made.stdout.toString('utf8').trim();
  if (parents.includes('HEAD') && (await headCommit(place)) === null) return commitTree(place, tree, parents.filter((p) => p !== 'HEAD'), message, env);
  throw new Error(`git commit-tree: ${made.error}`);
}

/** The commit HEAD names, or null in a repository without commits yet. */
export async function headCommit(place: GitPlace): Promise<string | null> {
  try {
    return (await gitOut(place, ['rev-parse', '--verify', '-q', 'HEAD^{commit}'])).trim() || null;
  } catch {
    return null;
  }
}
