import type { CompiledRule } from './compile';

/**
 * Which deny or ask rules can match any of a shell command's views, found without looping over
 * every rule for every view. Most command rules start with literal text (`npm run `, `git `),
 * their `commandField.prefix`, lower-cased: a view that does not start with it cannot match.
 * The rules are indexed once per rule list by the first word of their prefix; a view then
 * looks up its own first word. The answer keeps file order and may hold rules that do not
 * match (the caller still tests each), never leaves out one that could.
 */
interface PrefixIndex {
  /** Rules that every view must be tested against: no `command` condition, or no known prefix. */
  readonly always: readonly number[];
  /** Prefixes with a space: a view can match only if its first word is the prefix's first word. */
  readonly byFirstWord: ReadonlyMap<string, readonly number[]>;
  /** Prefixes without a space (`rm`, `git`): compared with each view. */
  readonly partial: readonly number[];
}

const indexes = new WeakMap<readonly CompiledRule[], PrefixIndex>();

function indexOf(rules: readonly CompiledRule[]): PrefixIndex {
  let index = indexes.get(rules);
  if (index) return index;
  const always: number[] = [];
  const byFirstWord = new Map<string, number[]>();
  const partial: number[] = [];
  rules.forEach((rule, i) => {
    const prefix = rule.commandField?.prefix ?? '';
    if (prefix === '') return void always.push(i);
    const space = prefix.indexOf(' ');
    if (space === -1) return void partial.push(i);
    const word = prefix.slice(0, space);
    const list = byFirstWord.get(word);
    if (list) list.push(i);
    else byFirstWord.set(word, [i]);
  });
  indexes.set(rules, (index = { always, byFirstWord, partial }));
  return index;
}

/** Indices into `rules`, ascending, of the rules whose prefix some view starts with (`views` as the prefixes are: lower-cased for strict rules). */
export function candidateRules(rules: readonly CompiledRule[], views: readonly string[]): number[] {
  const index = indexOf(rules);
  // Marks per rule, then read in order: no set, no sort.
  const marked = new Uint8Array(rules.length);
  for (const i of index.always) marked[i] = 1;
  for (const view of views) {
    const space = view.indexOf(' ');
    const listed = index.byFirstWord.get(space === -1 ? view : view.slice(0, space));
    if (listed) for (const i of listed) marked[i] = 1;
    for (const i of index.partial) if (view.startsWith(rules[i]!.commandField!.prefix)) marked[i] = 1;
  }
  const out: number[] = [];
  for (let i = 0; i < marked.length; i++) if (marked[i]) out.push(i);
  return out;
}
