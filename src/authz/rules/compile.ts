import type { Decision } from '../types';
import { participantIdSchema } from '../../collective/participant';
import { describePattern, type MatchPattern, type RuleSpec } from './schema';
import { READ_ONLY_COMMANDS, READ_ONLY_NAMES } from './shell-read-only';
import { didYouMean } from './did-you-mean';
import { regexMatcher } from './required-text';
import { anyGlob, compilePathGlob, compileTextGlob, type Matcher } from './glob';
import { KNOWN_TOOLS, hasGlobSyntax, isPathField, knownToolFields } from './known-tools';

/** One input-field condition of a compiled rule. */
export interface CompiledField {
  readonly name: string;
  /** Path fields are normalized against the workspace before matching. */
  readonly isPath: boolean;
  /** Tests a value (for a shell `command`: a text view of a part, or a plain command's words joined by spaces). */
  readonly test: Matcher;
  /** `{ words }`: the plain command's argv must start with exactly these words (allow rules). */
  readonly words?: readonly string[];
  /** `{ readOnly }`: the read-only commands this allow rule names (shell-read-only.ts). */
  readonly readOnly?: ReadonlySet<string>;
  /**
   * Literal text every matching value starts with ('' when unknown), lower-cased for strict
   * rules: a cheap pre-check before the regex (evaluate.ts).
   */
  readonly prefix: string;
}

/** A validated rule, ready to evaluate. Immutable. */
export interface CompiledRule {
  readonly id: string;
  readonly decision: Decision;
  readonly reason: string | undefined;
  readonly approver: string | undefined;
  /** Consulted only where no other rule matches (schema.ts `fallback`). */
  readonly fallback: boolean;
  /** Where it was defined (for messages and `legion rules list`). */
  readonly file: string;
  readonly line: number;
  readonly spec: RuleSpec;
  readonly matchesTool: Matcher;
  /** null = every participant. */
  readonly matchesParticipant: Matcher | null;
  readonly fields: readonly CompiledField[];
  /** The `command` condition, if any, and the other conditions (shell parts vary only the command). */
  readonly commandField: CompiledField | undefined;
  readonly otherFields: readonly CompiledField[];
}

/** A semantic problem in one rule, located by a path inside the rule. */
export interface RuleProblem {
  readonly path: (string | number)[];
  readonly message: string;
}

export type RuleCompile = { ok: true; rule: CompiledRule } | { ok: false; problem: RuleProblem };

/**
 * Check and compile one shape-valid rule: tool names (literal names must be known tools,
 * except the `mcp__` namespace; globs are not checked), match fields (for rules naming only
 * known tools, each field must be an input field of one of them), globs and regexes.
 */
export function compileRule(spec: RuleSpec, file: string, line: number): RuleCompile {
  const strict = spec.decision !== 'allow';
  const fail = (path: (string | number)[], message: string): RuleCompile => ({ ok: false, problem: { path, message } });

  const alternatives = spec.tool.split('|').map((t) => t.trim());
  const toolTests: Matcher[] = [];
  const literalTools: string[] = [];
  let allLiteralKnown = true;
  for (const alt of alternatives) {
    if (alt === '') return fail(['tool'], `empty alternative in tool "${spec.tool}"`);
    if (hasGlobSyntax(alt)) {
      allLiteralKnown = false;
      const glob = compilePathGlob(alt, strict);
      if (!glob.ok) return fail(['tool'], glob.error);
      toolTests.push(glob.test);
      continue;
    }
    if (!KNOWN_TOOLS.includes(alt)) {
      if (!alt.startsWith('mcp__')) return fail(['tool'], `unknown tool "${alt}"${didYouMean(alt, KNOWN_TOOLS)}`);
      allLiteralKnown = false;
    } else {
      literalTools.push(alt);
    }
    toolTests.push(strict ? literalNoCase(alt) : (name) => name === alt);
  }

  let matchesParticipant: Matcher | null = null;
  if (spec.participants !== undefined) {
    const globs = typeof spec.participants === 'string' ? [spec.participants] : spec.participants;
    const tests: Matcher[] = [];
    for (const glob of globs) {
      const compiled = compilePathGlob(glob, false);
      if (!compiled.ok) return fail(['participants'], compiled.error);
      tests.push(compiled.test);
    }
    matchesParticipant = anyOf(tests);
  }

  const fields: CompiledField[] = [];
  const allowedFields = allLiteralKnown ? [...new Set(literalTools.flatMap((t) => knownToolFields(t) ?? []))] : null;
  for (const [name, pattern] of Object.entries(spec.match ?? {})) {
    if (allowedFields && !allowedFields.includes(name)) {
      const tools = literalTools.join(', ');
      const has = allowedFields.length ? `has ${allowedFields.join(', ')}` : 'takes no input';
      return fail(['match', name], `unknown field "${name}" in match${didYouMean(name, allowedFields)}: ${tools} ${has}`);
    }
    const shellOnly = typeof pattern === 'object' && !Array.isArray(pattern) && !('regex' in pattern);
    if (shellOnly && (name !== 'command' || alternatives.length !== 1 || alternatives[0] !== 'shell')) {
      return fail(['match', name], `${describePattern(pattern).split(':')[0]} applies only to the command of a rule for the tool shell`);
    }
    if (typeof pattern === 'object' && 'readOnly' in pattern) {
      if (spec.decision !== 'allow') return fail(['match', name], `readOnly only applies to decision: allow (this rule says ${spec.decision})`);
      const unknown = pattern.readOnly.find((c) => !Object.hasOwn(READ_ONLY_COMMANDS, c));
      if (unknown !== undefined) return fail(['match', name], `"${unknown}" is not a known read-only command${didYouMean(unknown, READ_ONLY_NAMES)} (known: ${READ_ONLY_NAMES.join(', ')})`);
      fields.push({ name, isPath: false, test: () => false, readOnly: new Set(pattern.readOnly), prefix: '' });
      continue;
    }
    const compiled = compilePattern(name, pattern, strict);
    if (!compiled.ok) return fail(['match', name], compiled.error);
    const prefix = isPathField(name) ? '' : literalPrefix(pattern);
    const words = typeof pattern === 'object' && 'words' in pattern ? pattern.words : undefined;
    fields.push({ name, isPath: isPathField(name), test: compiled.test, ...(words ? { words } : {}), prefix: strict ? prefix.toLowerCase() : prefix });
  }

  if (spec.approver !== undefined) {
    if (!participantIdSchema().safeParse(spec.approver).success) return fail(['approver'], `approver "${spec.approver}" is not a participant id`);
    if (spec.decision !== 'ask') return fail(['approver'], `approver only applies to decision: ask (this rule says ${spec.decision})`);
  }

  // A fallback matches a call as a whole (a shell command unsplit), so it may only be stricter.
  if (spec.fallback && spec.decision === 'allow') return fail(['fallback'], 'a fallback rule must ask or deny (this rule says allow)');

  return {
    ok: true,
    rule: {
      id: spec.id,
      decision: spec.decision,
      reason: spec.reason,
      approver: spec.approver,
      fallback: spec.fallback === true,
      file,
      line,
      spec,
      matchesTool: anyOf(toolTests),
      matchesParticipant,
      fields,
      commandField: fields.find((f) => f.name === 'command'),
      otherFields: fields.filter((f) => f.name !== 'command'),
    },
  };
}

function compilePattern(name: string, pattern: MatchPattern, strict: boolean): { ok: true; test: Matcher } | { ok: false; error: string } {
  if (typeof pattern === 'object' && 'words' in pattern) {
    // As text (deny and ask views): the words, then anything after a space.
    const source = pattern.words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join(' ');
    return { ok: true, test: regexMatcher(new RegExp(`^(?:${source})(?: [\\s\\S]*)?$`, strict ? 'i' : '')) };
  }
  if (typeof pattern === 'object' && !Array.isArray(pattern)) {
    const { regex } = pattern as { regex: string };
    try {
      return { ok: true, test: regexMatcher(new RegExp(`^(?:${regex})$`, strict ? 'is' : '')) };
    } catch (error) {
      return { ok: false, error: `bad regex in match.${name}: ${(error as Error).message}` };
    }
  }
  const globs = typeof pattern === 'string' ? [pattern] : (pattern as readonly string[]);
  const compiledGlobs: { test: Matcher }[] = [];
  for (const glob of globs) {
    const compiled = isPathField(name) ? compilePathGlob(glob, strict) : compileTextGlob(glob, strict);
    if (!compiled.ok) return { ok: false, error: `match.${name}: ${compiled.error}` };
    compiledGlobs.push(compiled);
  }
  return { ok: true, test: anyGlob(compiledGlobs) };
}

/** The literal start shared by every value a pattern can match ('' when none is certain). */
export function literalPrefix(pattern: MatchPattern): string {
  if (typeof pattern === 'string') return globPrefix(pattern);
  if (Array.isArray(pattern)) {
    const prefixes = (pattern as readonly string[]).map(globPrefix);
    let common = prefixes[0] ?? '';
    for (const p of prefixes) while (!p.startsWith(common)) common = common.slice(0, -1);
    return common;
  }
  if ('words' in pattern) return pattern.words.join(' ');
  if ('regex' in pattern) return regexPrefix(pattern.regex);
  return '';
}

function globPrefix(glob: string): string {
  const stop = glob.search(/[*?[\]{}\\]/);
  return stop === -1 ? glob : glob.slice(0, stop);
}

/** Plain characters at the start of a regex, before any syntax; none if it has a top-level `|`. */
function regexPrefix(source: string): string {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === '[') {
      while (i < source.length && source[i] !== ']') i += source[i] === '\\' ? 2 : 1;
    } else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return '';
  }
  const match = /^[A-Za-z0-9 _\-=:,'"@%\/]*/.exec(source)![0];
  // A quantifier after the literal run makes its last character optional.
  return /^[?*{]/.test(source.slice(match.length)) ? match.slice(0, -1) : match;
}

function anyOf(tests: readonly Matcher[]): Matcher {
  if (tests.length === 1) return tests[0]!;
  return (value) => {
    for (const test of tests) if (test(value)) return true;
    return false;
  };
}

function literalNoCase(name: string): Matcher {
  const lower = name.toLowerCase();
  return (value) => value === name || value.toLowerCase() === lower;
}

