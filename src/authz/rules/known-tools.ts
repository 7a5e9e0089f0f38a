/**
 * The built-in tools (docs/design.md#tools) and their input fields, used to check rule files: a literal
 * tool name must be one of these (globs such as `mcp__*` and names in the `mcp__` namespace
 * are not checked), and a `match` field of a rule naming only known tools must be an input
 * field of one of them. Keep in sync with src/tools/ when a tool gains a field.
 */
export const KNOWN_TOOL_FIELDS: Readonly<Record<string, readonly string[]>> = {
  communicator: ['targetId', 'message', 'sessionName'],
  list_participants: [],
  list_tools: [],
  spawn_agent: ['id', 'name', 'description', 'systemPrompt', 'provider', 'model', 'tools', 'toolAuthorizations', 'approvalAuthority'],
  modify_agent: ['id', 'name', 'description', 'systemPrompt', 'provider', 'model', 'tools', 'toolAuthorizations', 'approvalAuthority'],
  retire_agent: ['id'],
  resolve_approval: ['requestId', 'decision', 'reason'],
  file_read: ['path', 'offset', 'limit'],
  file_write: ['path', 'content'],
  file_edit: ['path', 'oldString', 'newString', 'replaceAll'],
  file_list: ['path'],
  file_delete: ['path'],
  glob: ['pattern', 'path'],
  grep: ['pattern', 'path', 'glob'],
  shell: ['command', 'timeoutMs'],
  todo_write: ['todos'],
  todo_read: [],
  recall: ['query', 'message', 'offset', 'limit'],
};

export const KNOWN_TOOLS: readonly string[] = Object.keys(KNOWN_TOOL_FIELDS);

/** Tools whose `path`-like fields are workspace paths (normalized before matching). */
export const FILE_TOOLS: ReadonlySet<string> = new Set(['file_read', 'file_write', 'file_edit', 'file_list', 'file_delete', 'glob', 'grep']);

/** True when `glob` contains glob syntax (then it is not checked against KNOWN_TOOLS). */
export function hasGlobSyntax(glob: string): boolean {
  return /[*?[\]{}()!+@]/.test(glob);
}

/**
 * Whether an input field holds a workspace path: `path` of any tool, and for any tool a
 * field named `cwd`, `file`, `dir`, `directory` or ending in `Path`, `_path`, `File`, `Dir`.
 */
export function isPathField(field: string): boolean {
  return /^(path|cwd|file|dir|directory)$|(Path|_path|File|_file|Dir|_dir)$/.test(field);
}

/** Plain tool names: ASCII letters, digits, `_`, `-`, `.`, `:`. Anything else never matches a rule. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.:-]+$/;
