import type { ToolResult } from './types';

/** A successful result; `summary` is the one-line form for UI rows. */
export function okResult(content: string, summary?: string): ToolResult {
  return summary === undefined ? { content } : { content, summary };
}

/** An error result the model can read and act on. */
export function errorResult(content: string, summary?: string): ToolResult {
  return summary === undefined ? { content, isError: true } : { content, isError: true, summary };
}

/** Plural helper for result texts: `count(3, 'line')` → "3 lines". */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
