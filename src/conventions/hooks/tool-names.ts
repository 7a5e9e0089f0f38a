/**
 * Claude Code's tool names and the Legion tools that do the same (docs/conventions.md#tool-names).
 * Used by hook matchers, by the hook input (`tool_name`), and by agent files' `tools`.
 */
export const CLAUDE_TOOL_NAMES: Readonly<Record<string, readonly string[]>> = {
  Bash: ['shell'],
  Write: ['file_write'],
  Edit: ['file_edit'],
  MultiEdit: ['file_edit'],
  Read: ['file_read'],
  Glob: ['glob'],
  Grep: ['grep'],
  LS: ['file_list'],
  TodoWrite: ['todo_write', 'todo_read'],
  Task: ['communicator'],
  Agent: ['communicator'],
  Skill: ['skill'],
};

const LEGION_TO_CLAUDE: ReadonlyMap<string, string> = new Map([
  ['shell', 'Bash'], ['file_write', 'Write'], ['file_edit', 'Edit'], ['file_read', 'Read'], ['glob', 'Glob'], ['grep', 'Grep'],
  ['file_list', 'LS'], ['todo_write', 'TodoWrite'], ['communicator', 'Task'], ['skill', 'Skill'],
]);

/** The Claude Code name of a Legion tool, or undefined when Claude Code has none. */
export function claudeNameOf(legionName: string): string | undefined {
  return LEGION_TO_CLAUDE.get(legionName);
}

/** Every Claude Code name that stands for a Legion tool (`file_edit`: `Edit`, `MultiEdit`): what a hook matcher may name it by. */
export function claudeNamesOf(legionName: string): string[] {
  return Object.entries(CLAUDE_TOOL_NAMES).filter(([, legion]) => legion.includes(legionName)).map(([claude]) => claude);
}

/**
 * Whether a hook matcher selects a value: missing, empty or `*` select everything; otherwise
 * the matcher is a regular expression that must match the whole of one of `names` (as Claude
 * Code: `Write`, `Edit|Write`, `mcp__github__.*`); a matcher that is not a valid expression
 * is compared literally.
 */
export function matcherSelects(matcher: string | undefined, names: readonly string[]): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  let re: RegExp | null = null;
  try {
    re = new RegExp(`^(?:${matcher})$`);
  } catch {
    re = null;
  }
  return names.some((name) => (re ? re.test(name) : name === matcher));
}
