import type { Message } from '../model/message';

/**
 * Which tool batches get a checkpoint (docs/undo.md): a batch with at least one call that may
 * change workspace files. The builtin and collective tools below never do (the collective's
 * writes are under `.legion/`, which snapshots leave out); `file_write`, `file_edit`,
 * `file_delete` and `shell` do; any other tool (an MCP server's) does unless it is marked
 * read-only.
 */
const NEVER_CHANGE = new Set([
  'file_read', 'file_list', 'glob', 'grep', 'todo_read', 'todo_write', 'list_participants', 'list_tools',
  'communicator', 'spawn_agent', 'modify_agent', 'retire_agent', 'resolve_approval', 'recall',
]);

export function mayChangeWorkspace(name: string, readOnly: boolean | undefined): boolean {
  if (NEVER_CHANGE.has(name)) return false;
  return readOnly !== true;
}

/** The responder's turn number in a session: how many prompts (initiator text messages) it has had. */
export function turnNumber(messages: readonly Message[]): number {
  let turns = 0;
  for (const message of messages) {
    if (message.role !== 'user') continue;
    if (message.content.some((b) => b.type === 'tool_result')) continue;
    if (message.content.some((b) => b.type === 'text')) turns++;
  }
  return turns;
}
