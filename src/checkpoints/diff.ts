import { runGit, gitText, type GitPlace } from './git';
import type { FileChange } from './records';

/** The empty tree: what a workspace with no files snapshots to. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
export const ZERO_BLOB = '0000000000000000000000000000000000000000';
export const NO_MODE = '000000';

/** Parse `git diff-tree -r -z --raw --no-renames` output. */
export function parseRawDiff(raw: Buffer): FileChange[] {
  const parts = raw.toString('utf8').split('\0');
  const changes: FileChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const head = parts[i]!;
    const path = parts[i + 1]!;
    if (!head.startsWith(':')) break;
    const [oldMode, newMode, oldBlob, newBlob, status] = head.slice(1).split(' ');
    const kind = status?.[0];
    if (kind !== 'A' && kind !== 'M' && kind !== 'D' && kind !== 'T') continue;
    changes.push({ path, status: kind, oldMode: oldMode!, newMode: newMode!, oldBlob: oldBlob!, newBlob: newBlob! });
  }
  return changes;
}

/** Files that differ between two trees (paths relative to the workspace). */
export async function diffTrees(place: GitPlace, from: string, to: string): Promise<FileChange[]> {
  if (from === to) return [];
  const result = await runGit(place, ['diff-tree', '-r', '-z', '--raw', '--no-renames', '--no-abbrev', from, to]);
  if (!result.ok) throw new Error(`git diff-tree: ${result.error}`);
  return parseRawDiff(result.stdout);
}

/** A unified diff from `from` to `to`, limited to `paths` (all when omitted); binary files say so. */
export async function unifiedDiff(place: GitPlace, from: string, to: string, paths?: readonly string[]): Promise<string> {
  if (paths && paths.length === 0) return '';
  const args = ['diff', '--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', from, to];
  // `git diff` takes no pathspec file: paths go on the command line (literal, see git.ts), in chunks.
  if (!paths) return gitText(place, args);
  let out = '';
  for (let i = 0; i < paths.length; i += 500) out += await gitText(place, [...args, '--', ...paths.slice(i, i + 500)]);
  return out;
}

/** Lines added and removed per file (binary files: null). */
export async function numstat(place: GitPlace, from: string, to: string): Promise<Map<string, { added: number; removed: number } | null>> {
  const out = await gitText(place, ['diff', '--numstat', '-z', '--no-renames', from, to]);
  const stats = new Map<string, { added: number; removed: number } | null>();
  for (const entry of out.split('\0')) {
    const match = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(entry);
    if (!match) continue;
    stats.set(match[3]!, match[1] === '-' ? null : { added: Number(match[1]), removed: Number(match[2]) });
  }
  return stats;
}
