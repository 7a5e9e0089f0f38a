import { z } from 'zod';
import type { Tool } from '../types';
import { todoSchema, type Todo, type TodoStore } from '../todo-store';
import { errorResult, okResult, count } from '../result';
import { lazySchema } from '../../storage/lazy-schema';

/** Items in one list at most. */
export const TODO_MAX_ITEMS = 100;

const writeSchema = lazySchema(() =>
  z.strictObject({
    todos: z.array(todoSchema()).max(TODO_MAX_ITEMS).describe('The complete list (replaces the previous one)'),
  }),
);
const readSchema = lazySchema(() => z.strictObject({}));

const MARK: Record<Todo['status'], string> = { pending: '[ ]', in_progress: '[>]', done: '[x]' };

function tally(todos: readonly Todo[]): string {
  const n = (s: Todo['status']) => todos.filter((t) => t.status === s).length;
  return `${count(todos.length, 'todo')}: ${n('done')} done, ${n('in_progress')} in progress, ${n('pending')} pending`;
}

/** The list as text: one `[x] id: content` line per item (`[>]` in progress, `[ ]` pending). */
export function renderTodos(todos: readonly Todo[]): string {
  if (todos.length === 0) return '(no todos)';
  return [`${tally(todos)}`, ...todos.map((t) => `${MARK[t.status]} ${t.id}: ${t.content}`)].join('\n');
}

/**
 * `todo_write` / `todo_read`: the calling participant's own task list for the run.
 * `todo_write` replaces the whole list (ids must be unique); `todo_read` returns it.
 */
export function createTodoTools(store: TodoStore): [Tool<z.infer<ReturnType<typeof writeSchema>>>, Tool<z.infer<ReturnType<typeof readSchema>>>] {
  const todoWrite: Tool<z.infer<ReturnType<typeof writeSchema>>> = {
    name: 'todo_write',
    description:
      'Replace your task list for this run with the given items (id, content, status: pending | in_progress | done). ' +
      'Keep one item in_progress at a time and mark items done as soon as they are.',
    get schema() {
      return writeSchema();
    },
    keyArgument: (input) => count(input.todos.length, 'todo'),
    // Writes the list under .legion/, never the workspace's files.
    keepsWorkspaceFiles: true,
    async execute(input, context) {
      const seen = new Set<string>();
      for (const [i, t] of input.todos.entries()) {
        if (seen.has(t.id)) return errorResult(`todos.${i}.id: duplicate id "${t.id}"; ids must be unique`);
        seen.add(t.id);
      }
      await store.write(context.runId, context.participantId, input.todos);
      return okResult(renderTodos(input.todos), input.todos.length === 0 ? 'todo list cleared' : tally(input.todos));
    },
  };
  const todoRead: Tool<z.infer<ReturnType<typeof readSchema>>> = {
    name: 'todo_read',
    description: 'Read your task list for this run.',
    get schema() {
      return readSchema();
    },
    keyArgument: () => undefined,
    readOnly: true,
    async execute(_input, context) {
      const todos = await store.read(context.runId, context.participantId);
      return okResult(renderTodos(todos), todos.length === 0 ? 'no todos' : tally(todos));
    },
  };
  return [todoWrite, todoRead];
}
