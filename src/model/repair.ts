import type { Message, ToolResultBlock } from './message';
import { toolResultsOf, toolUsesOf } from './message';

export const INTERRUPTED_RESULT = 'interrupted: the tool call did not complete';

export interface Repair {
  /** Messages to append so that the history satisfies the invariant. */
  readonly append: Message[];
  /** Tool use ids that were answered by the repair. */
  readonly answered: string[];
  /** True when the history also has problems appending cannot fix (see `problems`). */
  readonly problems: string[];
}

/**
 * The history invariant (docs/design.md#message-format): each `tool_use` is answered by exactly one `tool_result`
 * in the next message. Histories are append-only, so repair only ever appends:
 * when the last message is an assistant message with unanswered `tool_use` blocks,
 * a user message answering each with an `isError` result is appended.
 * Orphans deeper in the history (which appends cannot have produced) are reported
 * in `problems` and removed from what is sent to a provider by `sanitizeForProvider`.
 */
export function planRepair(messages: readonly Message[], at: string, reason = INTERRUPTED_RESULT): Repair {
  const problems: string[] = [];
  const last = messages[messages.length - 1];
  const append: Message[] = [];
  const answered: string[] = [];
  if (last && last.role === 'assistant') {
    const uses = toolUsesOf(last);
    if (uses.length > 0) {
      const content: ToolResultBlock[] = uses.map((u) => ({ type: 'tool_result', toolUseId: u.id, content: reason, isError: true }));
      append.push({ role: 'user', content, at });
      answered.push(...uses.map((u) => u.id));
    }
  } else if (last && last.role === 'user') {
    // The tool results message may itself be partial (crash between results).
    const prev = messages[messages.length - 2];
    if (prev && prev.role === 'assistant') {
      const have = new Set(toolResultsOf(last).map((r) => r.toolUseId));
      const missing = toolUsesOf(prev).filter((u) => !have.has(u.id));
      if (missing.length > 0 && toolResultsOf(last).length > 0) {
        problems.push(`last message answers ${have.size} of ${have.size + missing.length} tool calls`);
      }
    }
  }
  for (let i = 0; i < messages.length - 1; i++) {
    const m = messages[i]!;
    if (m.role !== 'assistant') continue;
    const uses = toolUsesOf(m);
    if (uses.length === 0) continue;
    const next = messages[i + 1]!;
    const have = new Set(next.role === 'user' ? toolResultsOf(next).map((r) => r.toolUseId) : []);
    for (const u of uses) if (!have.has(u.id)) problems.push(`message ${i + 1}: tool_use ${u.id} has no result`);
  }
  return { append, answered, problems };
}

/** Apply `planRepair` in memory: returns the repaired list (the input is not changed). */
export function repairHistory(messages: readonly Message[], at = new Date().toISOString(), reason = INTERRUPTED_RESULT): Message[] {
  const { append } = planRepair(messages, at, reason);
  return append.length ? [...messages, ...append] : [...messages];
}

/**
 * What a provider is sent: a history where every tool_use has its result in the next
 * message and every tool_result follows its tool_use (APIs reject anything else).
 * Partial results are completed with error results; stray results are dropped;
 * consecutive messages of the same role are merged.
 */
export function sanitizeForProvider(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (const m of messages) {
    if (m.content.length === 0) continue;
    if (m.role === 'user') {
      const prev = out[out.length - 1];
      const uses = prev && prev.role === 'assistant' ? toolUsesOf(prev) : [];
      const given = new Map<string, ToolResultBlock>();
      for (const b of m.content) if (b.type === 'tool_result' && !given.has(b.toolUseId)) given.set(b.toolUseId, b);
      // Results first, in tool_use order (APIs want them before any text); strays dropped.
      const results = uses.map((u) => given.get(u.id) ?? interrupted(u.id));
      const content = [...results, ...m.content.filter((b) => b.type !== 'tool_result')];
      // A message of only stray results vanishes (and its neighbours may then merge).
      if (content.length > 0) pushMerged(out, { ...m, content });
    } else {
      const prev = out[out.length - 1];
      if (prev && prev.role === 'assistant' && toolUsesOf(prev).length > 0) {
        pushMerged(out, { role: 'user', at: m.at, content: toolUsesOf(prev).map((u) => interrupted(u.id)) });
      }
      pushMerged(out, m);
    }
  }
  const last = out[out.length - 1];
  if (last && last.role === 'assistant' && toolUsesOf(last).length > 0) {
    out.push(...repairHistory([last]).slice(1));
  }
  return out;
}

function interrupted(toolUseId: string): ToolResultBlock {
  return { type: 'tool_result', toolUseId, content: INTERRUPTED_RESULT, isError: true };
}

function pushMerged(out: Message[], m: Message): void {
  const prev = out[out.length - 1];
  if (prev && prev.role === m.role && m.role === 'user' && m.content.length > 0) {
    // Tool results must come first in a user message.
    const results = [...toolResultsOf(prev), ...toolResultsOf(m)];
    const rest = [...prev.content, ...m.content].filter((b) => b.type !== 'tool_result');
    out[out.length - 1] = { ...prev, content: [...results, ...rest] };
    return;
  }
  if (prev && prev.role === m.role && m.role === 'assistant') {
    out[out.length - 1] = { ...prev, content: [...prev.content, ...m.content] };
    return;
  }
  out.push(m);
}
