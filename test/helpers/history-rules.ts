/**
 * The history rules the real APIs enforce on a request, with their error messages, so the
 * vendor server can reject an invalid history the way Anthropic and OpenAI do (HTTP 400).
 * Returns null when the history is acceptable.
 */
type Json = Record<string, any>;

export function anthropicHistoryError(body: Json): string | null {
  const messages: Json[] = Array.isArray(body?.messages) ? body.messages : [];
  if (messages.length === 0) return 'messages: at least one message is required';
  if (messages[0]!.role !== 'user') return 'messages.0.role: the first message must use the "user" role';
  for (const [i, m] of messages.entries()) {
    const blocks: Json[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content ?? [];
    if (blocks.length === 0) return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    for (const [j, b] of blocks.entries()) {
      if (b.type === 'text' && (typeof b.text !== 'string' || b.text.length === 0)) return `messages.${i}.content.${j}.text: text content blocks must be non-empty`;
      if (b.type === 'tool_use' && (b.input === null || typeof b.input !== 'object' || Array.isArray(b.input))) {
        return `messages.${i}.content.${j}.tool_use.input: Input should be a valid dictionary`;
      }
    }
    const prev = messages[i - 1];
    const prevUses = new Set<string>(
      prev?.role === 'assistant' && Array.isArray(prev.content) ? prev.content.filter((b: Json) => b.type === 'tool_use').map((b: Json) => b.id) : [],
    );
    for (const [j, b] of blocks.entries()) {
      if (b.type === 'tool_result' && !prevUses.has(b.tool_use_id)) {
        return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
    }
    if (m.role === 'assistant') {
      const uses = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id as string);
      if (uses.length === 0) continue;
      const next = messages[i + 1];
      const answered = new Set<string>(
        next?.role === 'user' && Array.isArray(next.content) ? next.content.filter((b: Json) => b.type === 'tool_result').map((b: Json) => b.tool_use_id) : [],
      );
      const missing = uses.filter((id) => !answered.has(id));
      if (next && missing.length > 0) {
        return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
      if (!next) return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${uses.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
  }
  return null;
}

export function openaiHistoryError(body: Json): string | null {
  const messages: Json[] = Array.isArray(body?.messages) ? body.messages : [];
  if (messages.length === 0) return "[] is too short - 'messages'";
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      // Walk back over the tool messages to the assistant message they answer.
      let k = i - 1;
      while (k >= 0 && messages[k]!.role === 'tool') k--;
      const owner = messages[k];
      const ids = new Set<string>(owner?.role === 'assistant' ? (owner.tool_calls ?? []).map((c: Json) => c.id) : []);
      if (!ids.has(m.tool_call_id)) {
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      }
    }
    if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      const answered = new Set<string>();
      for (let k = i + 1; k < messages.length && messages[k]!.role === 'tool'; k++) answered.add(messages[k]!.tool_call_id);
      const missing = m.tool_calls.map((c: Json) => c.id as string).filter((id: string) => !answered.has(id));
      if (missing.length > 0) {
        return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`;
      }
      for (const c of m.tool_calls) {
        if (typeof c.function?.arguments !== 'string') return `messages.[${i}].tool_calls.function.arguments: expected a string`;
      }
    }
  }
  return null;
}

/** The 400 body each vendor sends for an invalid request. */
export function invalidRequestBody(vendor: 'anthropic' | 'openai', message: string): unknown {
  return vendor === 'anthropic'
    ? { type: 'error', error: { type: 'invalid_request_error', message } }
    : { error: { message, type: 'invalid_request_error', param: 'messages', code: null } };
}
