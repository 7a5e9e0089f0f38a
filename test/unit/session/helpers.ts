import type { Message } from '../../../src/model/message';
import type { Clock, IdSource } from '../../../src/session/ids';

export const T0 = new Date('2026-11-21T19:30:00.000Z');

/** A clock that advances one second per call, from `start`. */
export function steppingClock(start = T0): Clock {
  let t = start.getTime();
  return () => new Date((t += 1000) - 1000);
}

/** Tokens `a00001`, `a00002`, … */
export function counterIds(prefix = 'a'): IdSource {
  let n = 0;
  return () => `${prefix}${String(++n).padStart(5, '0')}`;
}

export const at = (i = 0): string => new Date(T0.getTime() + i * 1000).toISOString();

export function userText(text: string, i = 0): Message {
  return { role: 'user', content: [{ type: 'text', text }], at: at(i) };
}

export function assistantText(text: string, i = 0): Message {
  return { role: 'assistant', content: [{ type: 'text', text }], at: at(i) };
}

export function assistantTools(calls: readonly { id: string; name: string; input?: unknown }[], text = '', i = 0): Message {
  return {
    role: 'assistant',
    content: [...(text ? [{ type: 'text' as const, text }] : []), ...calls.map((c) => ({ type: 'tool_use' as const, id: c.id, name: c.name, input: c.input ?? {} }))],
    at: at(i),
  };
}

export function results(answers: readonly { id: string; content: string; isError?: boolean }[], i = 0): Message {
  return {
    role: 'user',
    content: answers.map((a) => ({ type: 'tool_result' as const, toolUseId: a.id, content: a.content, ...(a.isError ? { isError: true } : {}) })),
    at: at(i),
  };
}
