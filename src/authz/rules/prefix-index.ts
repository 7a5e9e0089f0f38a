import type { CompiledRule } from './compile';
import { requiredTextOf } from './required-text';

/**
 * Which deny or ask rules can match any of a shell command's views, found without looping over
 * every rule for every view. Most command rules start with literal text (`npm run `, `git `),
 * their `commandField.prefix`, lower-cased: a view that does not start with it cannot match.
 * The rules are indexed once per rule list by the first word of their prefix; a view then
 * looks up its own first word. The answer keeps file order and may hold rules that do not
 * match (the caller still tests each), never leaves out one that could.
 */
interface PrefixIndex {
  /** Rules that every view must be tested against: no `command` condition, or no known prefix nor literal. */
  readonly always: readonly number[];
  /**
   * Rules without a prefix whose `command` regex needs one of a few ASCII literals
   * (required-text.ts; lower-cased here): a candidate only for a view holding one. `any` is all
   * their literals in one regex, run once per view; only a view it finds is searched per rule.
   */
  readonly literal: { readonly any: RegExp; readonly rules: readonly { readonly i: number; readonly literals: readonly string[] }[] } | null;
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
  const literal: { i: number; literals: string[] }[] = [];
  rules.forEach((rule, i) => {
    const prefix = rule.commandField?.prefix ?? '';
    if (prefix === '') {
      const literals = asciiLiterals(rule);
      return void (literals ? literal.push({ i, literals }) : always.push(i));
    }
    const space = prefix.indexOf(' ');
    if (space === -1) return void partial.push(i);
    const word = prefix.slice(0, space);
    const list = byFirstWord.get(word);
    if (list) list.push(i);
    else byFirstWord.set(word, [i]);
  });
  const any = literal.length === 0 ? null : new RegExp([...new Set(literal.flatMap((r) => r.literals))].map(escapeLiteral).join('|'));
  indexes.set(rules, (index = { always, byFirstWord, partial, literal: any ? { any, rules: literal } : null }));
  return index;
}

/**
 * The literals one of which every view the rule's `command` matches contains, lower-cased, or
 * null when unknown or not all ASCII. Sound on lower-cased views: a view holding an ASCII
 * literal (in any case, for a case-insensitive regex: without the `u` flag case folding never
 * maps other characters onto ASCII) holds it lower-cased once lower-cased, the run being ASCII.
 */
function asciiLiterals(rule: CompiledRule): string[] | null {
  const field = rule.commandField;
  if (!field || field.readOnly || field.words) return null;
  const literals = requiredTextOf(field.test);
  if (!literals || literals.length === 0 || !literals.every((l) => l.length > 0 && ASCII.test(l))) return null;
  return literals.map((l) => l.toLowerCase());
}

const ASCII = /^[\x00-\x7f]*$/;

function holdsAny(view: string, literals: readonly string[]): boolean {
  for (const literal of literals) if (view.includes(literal)) return true;
  return false;
}

function escapeLiteral(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** Indices into `rules`, ascending, of the rules whose prefix some view starts with (`views` as the prefixes are: lower-cased for strict rules). */
export function candidateRules(rules: readonly CompiledRule[], views: readonly string[]): number[] {
  const index = indexOf(rules);
  // Marks per rule, then read in order: no set, no sort.
  const marked = marks(rules.length);
  for (const i of index.always) marked[i] = 1;
  const { literal } = index;
  for (const view of views) {
    const space = view.indexOf(' ');
    const listed = index.byFirstWord.get(space === -1 ? view : view.slice(0, space));
    if (listed) for (const i of listed) marked[i] = 1;
    for (const i of index.partial) if (view.startsWith(rules[i]!.commandField!.prefix)) marked[i] = 1;
    if (literal && literal.any.test(view)) {
      for (const { i, literals } of literal.rules) if (!marked[i] && holdsAny(view, literals)) marked[i] = 1;
    }
  }
  return markedInOrder(marked, rules.length);
}

/**
 * One buffer of marks for every lookup here (a lookup makes no typed array of its own): all
 * zero between lookups. A lookup runs to its end without calling out, so none overlaps another.
 */
let scratch = new Uint8Array(512);

function marks(length: number): Uint8Array {
  if (scratch.length < length) scratch = new Uint8Array(length);
  return scratch;
}

/** The marked indices below `length`, ascending, leaving every mark cleared. */
function markedInOrder(marked: Uint8Array, length: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < length; i++) {
    if (marked[i]) {
      out.push(i);
      marked[i] = 0;
    }
  }
  return out;
}

/**
 * Which allow rules for shell can allow one simple command, found without testing each:
 * indices into `rules`, ascending. A `{ words }` rule needs the command's program (`argv[0]`)
 * to be its first word; a glob or regex whose literal prefix holds a space needs the first
 * word of `text` (the words joined as allow rules see them) to be the prefix's first word
 * (`text` starts with the prefix). Every other rule (`{ readOnly }`, a prefix of one word or
 * none, no `command` condition) is always a candidate. May hold rules that do not match (the
 * caller tests each), never leaves out one that could.
 */
export function allowCandidates(rules: readonly CompiledRule[], program: string, text: string): number[] {
  const index = allowIndexOf(rules);
  const marked = marks(rules.length);
  for (const i of index.always) marked[i] = 1;
  const byProgram = index.byProgram.get(program);
  if (byProgram) for (const i of byProgram) marked[i] = 1;
  const space = text.indexOf(' ');
  const byWord = index.byFirstWord.get(space === -1 ? text : text.slice(0, space));
  if (byWord) for (const i of byWord) marked[i] = 1;
  return markedInOrder(marked, rules.length);
}

interface AllowIndex {
  readonly always: readonly number[];
  /** `{ words }` rules by their first word. */
  readonly byProgram: ReadonlyMap<string, readonly number[]>;
  /** Glob and regex rules by the first word of a prefix that holds a space. */
  readonly byFirstWord: ReadonlyMap<string, readonly number[]>;
}

const allowIndexes = new WeakMap<readonly CompiledRule[], AllowIndex>();

function allowIndexOf(rules: readonly CompiledRule[]): AllowIndex {
  let index = allowIndexes.get(rules);
  if (index) return index;
  const always: number[] = [];
  const byProgram = new Map<string, number[]>();
  const byFirstWord = new Map<string, number[]>();
  const file = (map: Map<string, number[]>, key: string, i: number): void => {
    const list = map.get(key);
    if (list) list.push(i);
    else map.set(key, [i]);
  };
  rules.forEach((rule, i) => {
    const field = rule.commandField;
    if (!field || field.readOnly) return void always.push(i);
    if (field.words) return void (field.words.length > 0 ? file(byProgram, field.words[0]!, i) : always.push(i));
    const space = field.prefix.indexOf(' ');
    if (space === -1) return void always.push(i);
    file(byFirstWord, field.prefix.slice(0, space), i);
  });
  allowIndexes.set(rules, (index = { always, byProgram, byFirstWord }));
  return index;
}
