import type { Draft } from '../state/ui-state';

export interface Completion {
  readonly draft: Draft;
  /** Every candidate that matched (shown as a hint when more than one). */
  readonly options: readonly string[];
}

/** The `@word` ending at the cursor, if any. */
export function mentionAt(d: Draft): { start: number; prefix: string } | null {
  const m = /(^|\s)@([a-z0-9-]*)$/.exec(d.text.slice(0, d.cursor));
  return m ? { start: d.cursor - m[2]!.length - 1, prefix: m[2]! } : null;
}

/**
 * Complete `@prefix` at the cursor against participant ids: one match completes with a space
 * after it, several complete their common prefix and list the options. Null when the word
 * before the cursor is not a mention or nothing matches.
 */
export function completeMention(d: Draft, ids: readonly string[]): Completion | null {
  const at = mentionAt(d);
  if (!at) return null;
  const options = ids.filter((id) => id.startsWith(at.prefix)).sort();
  if (options.length === 0) return null;
  const common = options.length === 1 ? `${options[0]!} ` : commonPrefix(options);
  const replaced = `@${common}`;
  const text = d.text.slice(0, at.start) + replaced + d.text.slice(d.cursor);
  return { draft: { ...d, text, cursor: at.start + replaced.length }, options };
}

function commonPrefix(words: readonly string[]): string {
  let prefix = words[0]!;
  for (const w of words) while (!w.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}
