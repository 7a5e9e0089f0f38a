/**
 * The key argument of a tool call, as shown on its compact row (`⚙ file_write docs/a.md ✓`).
 * Pure; unknown tools show their first short string argument.
 */
export function keyArgument(name: string, input: unknown, dot = '·'): string {
  const o = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const s = (k: string): string | undefined => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
  switch (name) {
    case 'file_read':
    case 'file_write':
    case 'file_edit':
    case 'file_delete':
      return s('path') ?? '';
    case 'file_list':
      return s('path') ?? '.';
    case 'glob':
    case 'grep':
      return [s('pattern'), s('path')].filter(Boolean).join(' in ');
    case 'shell':
      return oneLine(s('command') ?? '');
    case 'communicator': {
      const to = s('targetId') ?? '?';
      const session = s('sessionName');
      return `${to}${session ? ` ${dot} ${session}` : ''}: ${oneLine(s('message') ?? '')}`;
    }
    case 'spawn_agent':
    case 'modify_agent':
    case 'retire_agent':
      return s('id') ?? '';
    case 'resolve_approval':
      return [s('decision'), s('requestId')].filter(Boolean).join(' ');
    case 'todo_write':
      return Array.isArray(o.todos) ? `${o.todos.length} todos` : '';
    default: {
      for (const value of Object.values(o)) if (typeof value === 'string') return oneLine(value);
      return '';
    }
  }
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
