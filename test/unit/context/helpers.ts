import type { Message } from '../../../src/model/message';

const AT = '2026-01-01T00:00:00.000Z';
export const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }], at: AT });
export const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }], at: AT });
export const call = (id: string, name = 'file_read', input: unknown = { path: 'a.txt' }): Message => ({
  role: 'assistant', content: [{ type: 'tool_use', id, name, input }], at: AT,
});
export const result = (id: string, content: string): Message => ({
  role: 'user', content: [{ type: 'tool_result', toolUseId: id, content }], at: AT,
});

/** `turns` turns of: user text, a tool call, its (big) result, the final answer. */
export function toolTurns(turns: number, resultChars: number): Message[] {
  const out: Message[] = [];
  for (let t = 0; t < turns; t++) {
    out.push(user(`question ${t}`), call(`c${t}`), result(`c${t}`, `r${t}:`.padEnd(resultChars, 'x')), assistant(`answer ${t}`));
  }
  return out;
}
