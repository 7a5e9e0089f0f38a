/**
 * The input of a merge request (docs/worktrees.md#merge-requests): the work of an isolated
 * session coming back to the workspace. `conflict` lists the files that conflict with the
 * workspace; such a request cannot be approved as is (only rejected, or replaced by a rebase).
 */
export const MERGE_TOOL = 'merge';

export interface MergeInput {
  readonly session: string;
  readonly branch: string;
  readonly files: readonly { readonly path: string; readonly status: string; readonly added?: number; readonly removed?: number }[];
  readonly diffstat: string;
  readonly conflict?: readonly string[];
}

/** The conflicting files of a merge request, or null when it is not a conflicted merge. */
export function mergeConflictOf(toolName: string, input: unknown): readonly string[] | null {
  if (toolName !== MERGE_TOOL || typeof input !== 'object' || input === null) return null;
  const conflict = (input as { conflict?: unknown }).conflict;
  return Array.isArray(conflict) && conflict.length > 0 ? conflict.map(String) : null;
}
