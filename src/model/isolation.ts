/**
 * How a session's history says it works in a git worktree (docs/worktrees.md): the message that
 * starts its isolated work begins with this mark (the note telling the agent where it works). Front
 * ends read it from the history (lane header `worktree`), so it holds after a restart and when
 * attached to `legion serve`.
 */
export const ISOLATION_MARK = '[isolation]';

export function isIsolationNote(text: string): boolean {
  return text.startsWith(ISOLATION_MARK);
}
