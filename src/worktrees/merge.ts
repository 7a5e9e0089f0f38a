import { join } from 'node:path';
import { unifiedDiff } from '../checkpoints/diff';
import type { FileChange } from '../checkpoints/records';
import { isLegionSegment } from '../tools/path-safety';
import { findRepo, git, gitOut, placeOf, type Repo } from './repo';
import { snapshotCommit } from './snapshot';
import { worktreeGitDir, workspaceSnapshot } from './create';
import type { WorktreeRecord } from './store';

/** One changed file of a merge request, as its input lists it. */
export interface MergeFile {
  readonly path: string;
  readonly status: 'added' | 'modified' | 'deleted';
  /** Lines added / removed; absent for a binary file. */
  readonly added?: number;
  readonly removed?: number;
}

/** The agent's work, committed on its branch (docs/worktrees.md#merge-requests). */
export interface Work {
  readonly commit: string;
  readonly files: readonly MergeFile[];
  /** `3 files changed, 10 insertions(+), 2 deletions(-)`. */
  readonly diffstat: string;
  /** The unified diff of the work against its base (what the approver reads). */
  readonly diff: string;
}

/** A three-way merge of the work with the workspace as it is now, nothing applied yet. */
export type MergeCheck =
  | { readonly kind: 'clean'; readonly ours: string; readonly merged: string }
  | { readonly kind: 'conflict'; readonly ours: string; readonly merged: string; readonly files: readonly string[]; readonly hunks: string };

const STATUS = { A: 'added', M: 'modified', T: 'modified', D: 'deleted' } as const;

/** Workspace paths only: the part of the repository under the workspace, never `.legion/` or a `.git` folder. */
export function inWorkspace(repoPath: string, prefix: string): string | null {
  if (!repoPath.startsWith(prefix)) return null;
  const rel = repoPath.slice(prefix.length);
  const parts = rel.split('/');
  // Every `.legion` segment, in any spelling a file system may equate with it (`.LEGION/` on macOS):
  // the workspace's own grants approval authority, and a nested workspace's (a package opened on
  // its own, trusted: its rules and config are honoured at its next start) would take what the
  // agent wrote in its worktree. A merge must never write there.
  if (parts.some((p) => isLegionSegment(p) || p.toLowerCase() === '.git' || p === '..' || p === '')) return null;
  return rel;
}

/**
 * Commit what the agent left in its worktree (through the worktree's own index, which then holds
 * the work) onto its branch `legion/<session-id>` and describe it. Null when nothing changed.
 */
export async function collectWork(record: WorktreeRecord, prefix: string): Promise<Work | null> {
  const place = { gitDir: await worktreeGitDir(record.path), workTree: record.path };
  // The agent's own work: what it wrote is committed as it is (its worktree started without the workspace's secrets).
  const snapshot = await snapshotCommit(place, { indexFrom: join(place.gitDir, 'index'), inPlace: true, parents: [record.base], message: `legion: work of ${record.participantId} in ${record.sessionId}`, prefix, leaveOut: null });
  // The changed files and their line counts in one process (docs/worktrees.md#performance).
  const raw = await git(place, ['diff-tree', '-r', '-z', '--raw', '--numstat', '--no-renames', '--no-abbrev', record.base, snapshot.commit]);
  if (!raw.ok) throw new Error(`git diff-tree: ${raw.error}`);
  const { changes: all, stats } = parseRawNumstat(raw.stdout);
  const changes = all.filter((c) => inWorkspace(c.path, prefix) !== null);
  if (changes.length === 0) return null;
  // The branch and the diff do not depend on each other: both at once.
  const [, diff] = await Promise.all([
    gitOut(place, ['update-ref', '-m', 'legion: agent work', `refs/heads/${record.branch}`, snapshot.commit]),
    unifiedDiff(place, record.base, snapshot.commit, changes.map((c) => c.path)),
  ]);
  let added = 0;
  let removed = 0;
  const files: MergeFile[] = changes.map((c) => {
    const stat = stats.get(c.path);
    if (stat) { added += stat.added; removed += stat.removed; }
    return { path: inWorkspace(c.path, prefix)!, status: STATUS[c.status], ...(stat ? { added: stat.added, removed: stat.removed } : {}) };
  });
  const diffstat = `${files.length} file${files.length === 1 ? '' : 's'} changed, ${added} insertion${added === 1 ? '' : 's'}(+), ${removed} deletion${removed === 1 ? '' : 's'}(-)`;
  return { commit: snapshot.commit, files, diffstat, diff: prefix ? stripPrefix(diff, prefix) : diff };
}

/**
 * `git diff-tree -r -z --raw --numstat` output: the raw entries (`:modes oids status`, path), then
 * one `added<TAB>removed<TAB>path` per file (`-` for a binary file: no line counts).
 */
export function parseRawNumstat(out: Buffer): { changes: FileChange[]; stats: Map<string, { added: number; removed: number } | null> } {
  const parts = out.toString('utf8').split('\0');
  const changes: FileChange[] = [];
  let i = 0;
  for (; i + 1 < parts.length && parts[i]!.startsWith(':'); i += 2) {
    const [oldMode, newMode, oldBlob, newBlob, status] = parts[i]!.slice(1).split(' ');
    const kind = status?.[0];
    if (kind === 'A' || kind === 'M' || kind === 'D' || kind === 'T') changes.push({ path: parts[i + 1]!, status: kind, oldMode: oldMode!, newMode: newMode!, oldBlob: oldBlob!, newBlob: newBlob! });
  }
  const stats = new Map<string, { added: number; removed: number } | null>();
  for (; i < parts.length; i++) {
    const match = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(parts[i]!);
    if (match) stats.set(match[3]!, match[1] === '-' ? null : { added: Number(match[1]), removed: Number(match[2]) });
  }
  return { changes, stats };
}

/** Diff headers name repository paths; the approver reads workspace paths. */
function stripPrefix(diff: string, prefix: string): string {
  return diff.split('\n').map((line) => (/^(diff --git |--- |\+\+\+ )/.test(line) ? line.split(` a/${prefix}`).join(' a/').split(` b/${prefix}`).join(' b/') : line)).join('\n');
}

/**
 * Merge `work` into the workspace as it is now, on paper: the workspace is snapshotted (a
 * temporary index; parent: the work's base, so that base is the merge base) and `git merge-tree`
 * computes the result. Conflicts come with the conflicting hunks (the merged files' markers).
 */
export async function checkMerge(repo: Repo, base: string, work: string, leaveOut: (workspacePath: string) => boolean): Promise<MergeCheck> {
  return mergeWith(repo, await workspaceAt(repo, base, leaveOut), work);
}

/** The workspace now, committed with parent `base` (the "ours" side of a merge of work based on `base`), without the untracked files `leaveOut` names. */
export async function workspaceAt(repo: Repo, base: string, leaveOut: (workspacePath: string) => boolean): Promise<string> {
  return (await workspaceSnapshot(repo, [base], 'legion: the workspace at merge', leaveOut)).commit;
}

/** `checkMerge` against a workspace snapshot already made (`workspaceAt`). */
export async function mergeWith(repo: Repo, ours: string, work: string): Promise<MergeCheck> {
  const place = placeOf(repo);
  const result = await git(place, ['merge-tree', '--write-tree', '--name-only', '--no-messages', ours, work]);
  const lines = result.stdout.toString('utf8').split('\n');
  const merged = lines[0]?.trim() ?? '';
  if (result.ok) return { kind: 'clean', ours, merged };
  if (result.code !== 1 || !/^[0-9a-f]{40,64}$/.test(merged)) throw new Error(`git merge-tree: ${result.error}`);
  const conflicted = [...new Set(lines.slice(1).filter((l) => l.length > 0))];
  const files = conflicted.map((p) => inWorkspace(p, repo.prefix) ?? p);
  const hunks = await unifiedDiff(place, ours, merged, conflicted);
  return { kind: 'conflict', ours, merged, files, hunks };
}

export { findRepo };
