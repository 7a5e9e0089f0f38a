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
   * (required-text.ts; lower-cased here): a candidate only for a view holding one.
   */
  readonly literal: LiteralScan | null;
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
  const literal = new LiteralScan();
  rules.forEach((rule, i) => {
    const prefix = rule.commandField?.prefix ?? '';
    if (prefix === '') {
      const literals = asciiLiterals(rule);
      return void (literals ? literal.add(i, literals) : always.push(i));
    }
    const space = prefix.indexOf(' ');
    if (space === -1) return void partial.push(i);
    const word = prefix.slice(0, space);
    const list = byFirstWord.get(word);
    if (list) list.push(i);
    else byFirstWord.set(word, [i]);
  });
  indexes.set(rules, (index = { always, byFirstWord, partial, literal: literal.empty ? null : literal }));
  return index;
}

/**
 * Finds which rules' literals a view holds in one pass over it, without a regex: a table of the
 * literals' first two characters (7-bit codes, 128 × 128 entries) says at which positions a
 * literal can start; only there are the literals starting with those two characters compared.
 * One-character literals (`(`) have a table of their own.
 */
class LiteralScan {
  empty = true;
  private readonly single = new Uint8Array(128);
  private readonly pairs = new Uint8Array(128 * 128);
  private readonly byStart = new Map<number, { readonly rule: number; readonly literal: string }[]>();

  /** Files `rule` under each of its literals (lower-cased ASCII, none empty). */
  add(rule: number, literals: readonly string[]): void {
    this.empty = false;
    for (const literal of literals) {
      const key = literal.length === 1 ? literal.charCodeAt(0) : literal.charCodeAt(0) * 128 + literal.charCodeAt(1);
      (literal.length === 1 ? this.single : this.pairs)[key] = 1;
      const list = this.byStart.get(literal.length === 1 ? -1 - key : key);
      if (list) list.push({ rule, literal });
      else this.byStart.set(literal.length === 1 ? -1 - key : key, [{ rule, literal }]);
    }
  }

  /** Marks every rule with a literal that `view` (lower-cased) holds. */
  markIn(view: string, marked: Uint8Array): void {
    for (let at = 0; at < view.length; at++) {
      const c = view.charCodeAt(at);
      if (c >= 128) continue;
      if (this.single[c]) for (const { rule } of this.byStart.get(-1 - c)!) marked[rule] = 1;
      const d = view.charCodeAt(at + 1); // NaN past the end: no entry
      if (!(d < 128) || !this.pairs[c * 128 + d]) continue;
      for (const { rule, literal } of this.byStart.get(c * 128 + d)!) if (!marked[rule] && view.startsWith(literal, at)) marked[rule] = 1;
    }
  }
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



/** Indices into `rules`, ascending, of the rules whose prefix some view starts with (`views` as the prefixes are: lower-cased for strict rules). */
export function candidateRules(rules: readonly CompiledRule[], views: readonly string[]): number[] {
  const index = indexOf(rules);
  // Marks per rule, then read in order: no set, no sort.
  const marked = marks(rules.length);
  for (const i of index.always) marked[i] = 1;
  const { literal } = index;
  const whole = views[0];
  for (let v = 0; v < views.length; v++) {
    const view = views[v]!;
    const space = view.indexOf(' ');
    const listed = index.byFirstWord.get(space === -1 ? view : view.slice(0, space));
    if (listed) for (const i of listed) marked[i] = 1;
    for (const i of index.partial) if (view.startsWith(rules[i]!.commandField!.prefix)) marked[i] = 1;
    // A view inside the first (a command's text is a span of the line's) holds no literal the
    // first does not: its scan would mark nothing new (a native search is cheaper than the scan).
    if (literal && (v === 0 || !whole!.includes(view))) literal.markIn(view, marked);
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
export function allowCandidates(rules: readonly CompiledRule[], program: string, text: string): readonly number[] {
  // A pure function of the program and the first word of `text`, which is the program itself for
  // most commands (argvText writes a name without whitespace as it is): remembered per rule list
  // by the program, or by both when they differ. No marking pass over every rule, no new list.
  const space = text.indexOf(' ');
  const wordLength = space === -1 ? text.length : space;
  const key = wordLength === program.length && text.startsWith(program) ? program : `${program}\0${text.slice(0, wordLength)}`;
  let known = allowMemos.get(rules);
  if (!known) allowMemos.set(rules, (known = new Map()));
  const remembered = known.get(key);
  if (remembered) return remembered;
  const index = allowIndexOf(rules);
  const marked = marks(rules.length);
  for (const i of index.always) marked[i] = 1;
  const byProgram = index.byProgram.get(program);
  if (byProgram) for (const i of byProgram) marked[i] = 1;
  const byWord = index.byFirstWord.get(text.slice(0, wordLength));
  if (byWord) for (const i of byWord) marked[i] = 1;
  const candidates = Object.freeze(markedInOrder(marked, rules.length));
  if (known.size >= ALLOW_MEMO_LIMIT) known.clear();
  known.set(key, candidates);
  return candidates;
}

/** allowCandidates' answers per rule list, by program (and first word): bounded. */
const allowMemos = new WeakMap<readonly CompiledRule[], Map<string, readonly number[]>>();
const ALLOW_MEMO_LIMIT = 1024;

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
