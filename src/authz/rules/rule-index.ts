import type { CompiledRule } from './compile';
import { requiredTextOf } from './required-text';

/**
 * Which rules of one tier list can match a call, found without testing each
 * (docs/rules.md#performance). A rule whose condition on some field needs one of a few
 * literals (required-text.ts: `src/`, `.env`, `gen-12`) is filed under three consecutive
 * characters, lower-cased, of each (the run rarest among the list's literals); a call then visits only the rules filed under some
 * three-character run of that field's values, plus the rules with no such literal, which
 * stay in every answer. Sound: a value containing a literal contains each three-character
 * run of it, and lower-casing ASCII text keeps it (case-insensitive rules fold only
 * ASCII onto ASCII without the `u` flag); literals with other characters are not used. The
 * caller still tests every candidate, in file order, so the first match is the same.
 */
interface RuleIndex {
  /** One entry per field the rules are filed under. */
  readonly fields: readonly IndexedField[];
  /** Per rule: whether it is filed under a field (else it is always a candidate). */
  readonly filed: Uint8Array;
}

interface IndexedField {
  readonly name: string;
  readonly isPath: boolean;
  readonly strict: boolean;
  readonly byTrigram: ReadonlyMap<number, readonly number[]>;
}

/** Values of a field as the rules see them (evaluate.ts `Lookup`). */
export type FieldValues = (field: string, isPath: boolean, strict: boolean) => readonly string[] | null;

const GRAM = 3;
const ASCII = /^[\x00-\x7f]*$/;
const indexes = new WeakMap<readonly CompiledRule[], RuleIndex>();

function indexOf(rules: readonly CompiledRule[]): RuleIndex {
  let index = indexes.get(rules);
  if (index) return index;
  // Each rule's first field with usable literals (one is enough: every field must match).
  const chosen: { rule: number; key: string; name: string; isPath: boolean; strict: boolean; literals: string[] }[] = [];
  rules.forEach((rule, i) => {
    const strict = rule.decision !== 'allow';
    for (const field of rule.fields) {
      if (field.readOnly || field.words) continue;
      const literals = requiredTextOf(field.test);
      if (!literals || literals.length === 0 || !literals.every((l) => l.length >= GRAM && ASCII.test(l))) continue;
      chosen.push({ rule: i, key: `${field.name}\0${field.isPath}\0${strict}`, name: field.name, isPath: field.isPath, strict, literals: literals.map((l) => l.toLowerCase()) });
      return;
    }
  });
  // Any three characters of a literal will do (a value holding the literal holds them all):
  // each literal is filed under its rarest among the rules' literals, so that a common run
  // (`src`, `.ts`) does not make every rule naming `src-20` a candidate for every `src/` path.
  const frequency = new Map<number, number>();
  for (const { literals } of chosen) {
    for (const literal of literals) for (const gram of new Set(gramsOf(literal))) frequency.set(gram, (frequency.get(gram) ?? 0) + 1);
  }
  const fields = new Map<string, { name: string; isPath: boolean; strict: boolean; byTrigram: Map<number, number[]> }>();
  const filed = new Uint8Array(rules.length);
  for (const { rule, key, name, isPath, strict, literals } of chosen) {
    let entry = fields.get(key);
    if (!entry) fields.set(key, (entry = { name, isPath, strict, byTrigram: new Map() }));
    for (const gram of new Set(literals.map((l) => rarest(gramsOf(l), frequency)))) {
      const list = entry.byTrigram.get(gram);
      if (list) list.push(rule);
      else entry.byTrigram.set(gram, [rule]);
    }
    filed[rule] = 1;
  }
  indexes.set(rules, (index = { fields: [...fields.values()], filed }));
  return index;
}

/** Every three-character run of a lower-cased ASCII literal, as gramAt numbers. */
function gramsOf(literal: string): number[] {
  const grams: number[] = [];
  for (let at = 0; at + GRAM <= literal.length; at++) grams.push(gramAt(literal, at));
  return grams;
}

/** The least frequent of `grams` (the first such). */
function rarest(grams: readonly number[], frequency: ReadonlyMap<number, number>): number {
  let best = grams[0]!;
  for (const gram of grams) if (frequency.get(gram)! < frequency.get(best)!) best = gram;
  return best;
}

/**
 * Per rule of `rules`: 1 when it may match a call whose fields read as `values` say, 0 when it
 * provably cannot. Rules with no usable literal are always 1.
 */
export function candidateMask(rules: readonly CompiledRule[], values: FieldValues): Uint8Array {
  return candidateMaskInto(rules, values, new Uint8Array(rules.length));
}

/**
 * candidateMask written into the first `rules.length` entries of `mask` (at least that long;
 * what it held before is overwritten, the entries past them are left as they were), so a
 * caller can reuse one buffer instead of allocating one per call. Returns `mask`.
 */
export function candidateMaskInto(rules: readonly CompiledRule[], values: FieldValues, mask: Uint8Array): Uint8Array {
  const index = indexOf(rules);
  if (mask.length < rules.length) throw new RangeError(`candidate mask of ${mask.length} entries for ${rules.length} rules`);
  for (let i = 0; i < rules.length; i++) mask[i] = index.filed[i]! ^ 1;
  for (const field of index.fields) {
    const list = values(field.name, field.isPath, field.strict);
    if (!list) continue; // the field is absent: no rule filed under it can match
    for (const value of list) {
      for (let at = 0; at + GRAM <= value.length; at++) {
        const gram = gramAt(value, at);
        if (gram < 0) continue;
        const rulesHere = field.byTrigram.get(gram);
        if (rulesHere) for (const i of rulesHere) mask[i] = 1;
      }
    }
  }
  return mask;
}

/**
 * The three characters of `text` at `at` as one number, ASCII letters lower-cased, or -1 when
 * one is not ASCII (no ASCII literal matches there: without the `u` flag case folding never
 * maps other characters onto ASCII). No string is made per position.
 */
function gramAt(text: string, at: number): number {
  let gram = 0;
  for (let k = 0; k < GRAM; k++) {
    let c = text.charCodeAt(at + k);
    if (c > 0x7f) return -1;
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    gram = (gram << 7) | c;
  }
  return gram;
}
