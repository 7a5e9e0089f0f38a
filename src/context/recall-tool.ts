import { z } from 'zod';
import type { Message } from '../model/message';
import type { Tool, ToolResult } from '../tools/types';
import type { ContextRecord } from './records';
import { stateOf } from './records';
import { messagePage, searchHistory } from './recall';
import { lazySchema } from '../storage/lazy-schema';

/** What `recall` is built with (by the runtime core): a session's history, compacted parts included. */
export interface RecallDeps {
  sessionHistory(sessionId: string): { messages: readonly Message[]; records: readonly ContextRecord[] } | undefined;
}

const schema = lazySchema(() =>
  z
    .strictObject({
      query: z.string().min(1).max(500).optional().describe('Words to find (all must appear, any case), e.g. a file name, an error text, a decision.'),
      message: z.number().int().min(0).optional().describe('Show this message number whole instead (paged: see offset).'),
      offset: z.number().int().min(0).optional().describe('With message: the character to start from (for long messages).'),
      limit: z.number().int().min(1).max(50).optional().describe('Excerpts to return (default 10, newest first).'),
    })
    .refine((i) => i.query !== undefined || i.message !== undefined, { message: 'give a query or a message number' }),
);

/**
 * `recall`: every agent holds it (docs/context.md). It reads only the caller's own session,
 * on disk and in memory, compacted parts included: what compaction took out of the request
 * can always be brought back.
 */
export function createRecallTool(deps: RecallDeps): Tool<z.infer<ReturnType<typeof schema>>> {
  return {
    name: 'recall',
    description:
      "Search this session's full history, including the parts compacted into a summary or evicted from the context, " +
      'and get excerpts with their message numbers; or pass `message` to read one message whole (e.g. an evicted tool output).',
    get schema() {
      return schema();
    },
    keyArgument: (input) => input.query ?? (input.message !== undefined ? `message ${input.message}` : undefined),
    readOnly: true,
    async execute(input, context): Promise<ToolResult> {
      const history = deps.sessionHistory(context.sessionId);
      if (!history) return { content: `recall: no session ${context.sessionId} in this run`, isError: true };
      const { messages } = history;
      const state = stateOf(history.records, messages.length);
      const mark = (i: number): string => (i < state.firstKept ? ' (compacted)' : i < state.evictBefore ? ' (outputs evicted)' : '');
      if (input.message !== undefined) {
        const message = messages[input.message];
        if (!message) return { content: `no message ${input.message}: this session has messages 0–${messages.length - 1}`, isError: true };
        const page = messagePage(message, input.offset ?? 0);
        const more = page.next !== null ? `\n[… ${page.length - page.next} more characters: call recall with message ${input.message}, offset ${page.next}]` : '';
        return { content: `message ${input.message} · ${message.role}${mark(input.message)}\n${page.text}${more}`, summary: `message ${input.message}` };
      }
      const { hits, total } = searchHistory(messages, input.query!, input.limit ?? 10);
      if (total === 0) return { content: `nothing in this session's ${messages.length} messages contains all of: ${input.query}`, summary: 'no match' };
      const lines = hits.map((h) => `message ${h.index} · ${h.role}${mark(h.index)}: ${h.excerpt}`);
      const shown = total > hits.length ? ` (newest ${hits.length} shown; narrow the query or raise limit)` : '';
      return {
        content: `${total} message(s) match${shown}. Read one whole with recall { message: N }.\n${lines.join('\n')}`,
        summary: `${total} match${total === 1 ? '' : 'es'}`,
      };
    },
  };
}
