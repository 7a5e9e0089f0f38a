import type { Message } from '../model/message';
import { CHARS_PER_TOKEN } from './estimate';

/**
 * The summarizer's instructions (docs/context.md, "Summary"). The request offers no tools, so
 * the model can only write; the summary replaces the older messages in every later request,
 * so it must carry what the agent needs to go on without them.
 */
export const SUMMARY_SYSTEM_PROMPT = `You compact the history of a conversation between an agent and whoever it works for, so that the agent can continue the work from your summary alone. You cannot call tools; write the summary only.

Write plain Markdown under exactly these headings, keeping every fact that is still needed and dropping chatter:

## Goal
The task as the caller gave it, in their words where they matter, and any constraints they set.
## Decisions
What was decided or agreed, and why, including approaches tried and rejected.
## Files and state
Every file, command and resource touched: path, what was done to it, and its state now (created, edited, deleted, read only). Exact names, paths, identifiers and numbers; never paraphrase them.
## Open tasks
What is left to do, in order, and what the agent was doing when the history was cut.
## Promises
What was promised to whom (the user, other agents), and what others promised the agent.
## People and sessions
The names of the agents, sessions and people involved and their roles.

Be concrete and complete but brief. The full history stays on disk: say where an exact detail (a long output, a file's content) lives in it by message number, because the agent has a recall tool that searches the full history and returns excerpts by message number.`;

/** Characters of a tool result shown to the summarizer (head and tail); the rest is left to `recall`. */
const RESULT_EXCERPT = 1500;
/** Characters of one text block shown to the summarizer: a huge reply or paste must not overflow its request. */
const TEXT_EXCERPT = 12_000;

function excerpt(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n[… ${text.length - max} characters left out …]\n${text.slice(-half)}`;
}

/** One message as plain text for the summarizer, numbered as in the session's history. */
export function renderForSummary(message: Message, index: number, speakers: { user: string; assistant: string }): string {
  const parts: string[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        if (block.text.trim() !== '') parts.push(excerpt(block.text, TEXT_EXCERPT));
        break;
      case 'tool_use':
        parts.push(`[tool call ${block.name} ${excerpt(JSON.stringify(block.input ?? {}), 600)}]`);
        break;
      case 'tool_result':
        parts.push(`[tool result${block.isError ? ' (error)' : ''}: ${excerpt(block.content, RESULT_EXCERPT)}]`);
        break;
    }
  }
  return `### message ${index} · ${speakers[message.role]}\n${parts.join('\n')}`;
}

/**
 * Split `messages[from..to)` into consecutive chunks whose rendered text fits `maxTokens`
 * each (a single message longer than that is a chunk of its own; its results are already
 * cut to excerpts). Each chunk is summarized after the previous summary.
 */
export function summaryChunks(
  messages: readonly Message[],
  from: number,
  to: number,
  maxTokens: number,
  speakers: { user: string; assistant: string },
): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let size = 0;
  const budget = maxTokens * CHARS_PER_TOKEN;
  for (let i = from; i < to; i++) {
    const text = renderForSummary(messages[i]!, i, speakers);
    if (size + text.length > budget && current.length > 0) {
      chunks.push(current.join('\n\n'));
      current = [];
      size = 0;
    }
    current.push(text);
    size += text.length + 2;
  }
  if (current.length > 0) chunks.push(current.join('\n\n'));
  return chunks;
}

/** The user message of one summary request: the previous summary (if any), then the messages to fold in. */
export function summaryRequestText(previous: string | null, chunk: string, who: { initiator: string; responder: string; session: string }): string {
  const head =
    `The agent is "${who.responder}", answering "${who.initiator}" in session "${who.session}". ` +
    `Summarize the history below so that "${who.responder}" can continue from your summary alone.`;
  const prior = previous ? `\n\n# Summary of the earlier history (fold it into yours; keep what is still true)\n\n${previous}` : '';
  return `${head}${prior}\n\n# Messages to summarize\n\n${chunk}`;
}
