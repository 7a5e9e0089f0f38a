import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { writeJsonAtomic } from '../storage/atomic';
import { layoutFor } from '../storage/layout';
import { lazySchema } from '../storage/lazy-schema';

export type TodoStatus = 'pending' | 'in_progress' | 'done';
export interface Todo {
  readonly id: string;
  readonly content: string;
  readonly status: TodoStatus;
}

export const TODO_STATUSES = ['pending', 'in_progress', 'done'] as const satisfies readonly TodoStatus[];

export const todoSchema = lazySchema(() =>
  z.strictObject({
    id: z.string().min(1).max(100),
    content: z.string().min(1).max(2000),
    status: z.enum(TODO_STATUSES),
  }),
);

const fileSchema = lazySchema(() =>
  z.object({
    version: z.literal(1),
    participants: z.record(z.string(), z.array(todoSchema())),
  }),
);

/** Each participant's todo list within a run. A write replaces that participant's whole list. */
export interface TodoStore {
  read(runId: string, participantId: string): Promise<readonly Todo[]>;
  write(runId: string, participantId: string, todos: readonly Todo[]): Promise<void>;
}

function checkRunId(runId: string): void {
  if (runId.length === 0 || /[\\/\0]/.test(runId) || runId === '.' || runId === '..') {
    throw new Error(`invalid run id "${runId.slice(0, 100)}"`);
  }
}

/**
 * Todo lists in `.legion/runs/<runId>/todos.json` (`{ version: 1, participants: { id: Todo[] } }`),
 * validated when read back, written atomically. Operations on one file are serialized in
 * this process, so parallel participants never lose each other's updates. A damaged file is
 * reported (naming it) and never overwritten.
 */
/** `scrub`: applied to the file's content before it is written (secret scrubbing); default none. */
export function createFileTodoStore(workspaceRoot: string, options: { readonly scrub?: <T>(value: T) => T } = {}): TodoStore {
  const scrub = options.scrub ?? (<T>(value: T): T => value);
  const layout = layoutFor(workspaceRoot);
  const queues = new Map<string, Promise<unknown>>();

  const serialized = <T>(file: string, op: () => Promise<T>): Promise<T> => {
    const previous = queues.get(file) ?? Promise.resolve();
    const next = previous.then(op, op);
    queues.set(file, next.catch(() => undefined));
    return next;
  };

  const load = async (file: string): Promise<Map<string, Todo[]>> => {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw error;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`${file} is damaged (not valid JSON); fix or delete it`);
    }
    const parsed = fileSchema().safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`${file} is damaged (${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'}); fix or delete it`);
    }
    return new Map(Object.entries(parsed.data.participants));
  };

  return {
    async read(runId, participantId) {
      checkRunId(runId);
      const file = layout.todos(runId);
      return serialized(file, async () => (await load(file)).get(participantId) ?? []);
    },
    async write(runId, participantId, todos) {
      checkRunId(runId);
      const file = layout.todos(runId);
      return serialized(file, async () => {
        const all = await load(file);
        all.set(participantId, todos.map((t) => ({ id: t.id, content: t.content, status: t.status })));
        await writeJsonAtomic(file, scrub({ version: 1, participants: Object.fromEntries(all) }));
      });
    },
  };
}

/** An in-memory store with the same contract (tests, ephemeral runs). */
export function createMemoryTodoStore(): TodoStore {
  const lists = new Map<string, readonly Todo[]>();
  const key = (runId: string, participantId: string) => `${runId}\u0000${participantId}`;
  return {
    async read(runId, participantId) {
      return lists.get(key(runId, participantId)) ?? [];
    },
    async write(runId, participantId, todos) {
      lists.set(key(runId, participantId), todos.map((t) => ({ ...t })));
    },
  };
}
