/**
 * How a session's history says it works in a git worktree (docs/worktrees.md): the message that
 * starts its isolated work begins with this mark (the note telling the agent where it works). Front
 * ends read it from the history (lane header `worktree`), so it holds after a restart and when
 * attached to `legion serve`.
 */
export const ISOLATION_MARK = '[isolation]';

/**
 * Making a session's worktree ready: the note telling the agent where it works (empty when not
 * isolated), or why it could not be made. `no-repository`: the workspace is not in a git
 * repository (only then may work isolated by default run without isolation); `failed`: anything
 * else (git failed, a refusal) — the work must not run unisolated instead.
 */
export type IsolationPrepared =
  | { readonly ok: true; readonly note: string }
  | { readonly ok: false; readonly error: string; readonly kind: 'no-repository' | 'failed' };

export function isIsolationNote(text: string): boolean {
  return text.startsWith(ISOLATION_MARK);
}
