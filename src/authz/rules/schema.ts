import { z } from 'zod';
import { didYouMean } from './did-you-mean';
import { lazySchema } from '../../storage/lazy-schema';

/**
 * The shape of a rules file (docs/design.md#authorization), strict: an unknown field is an error.
 * Semantic checks (tool names, match fields, globs, regexes, duplicate ids) happen in
 * compile.ts; this file only describes the shape and turns zod issues into one line.
 */
export const decisionSchema = lazySchema(() => z.enum(['allow', 'ask', 'deny']));

export const regexPatternSchema = lazySchema(() => z.strictObject({ regex: z.string().min(1) }));
/** Shell `command` only: the command's first words, exactly (docs/shell-rules.md#allow-rules). */
export const wordsPatternSchema = lazySchema(() => z.strictObject({ words: z.array(z.string().min(1)).min(1) }));
/** Shell `command` of an allow rule only: these read-only commands, their paths checked (shell-read-only.ts). */
export const readOnlyPatternSchema = lazySchema(() => z.strictObject({ readOnly: z.array(z.string().min(1)).min(1) }));

/**
 * A string is a glob, a list is any-of (OR), `{ regex }` is a full-match regex; for a shell
 * `command` also `{ words }` (a prefix of words) and `{ readOnly }` (checked read-only commands).
 */
export const matchPatternSchema = lazySchema(() =>
  z.union([z.string().min(1), z.array(z.string().min(1)).min(1), regexPatternSchema(), wordsPatternSchema(), readOnlyPatternSchema()]),
);

export const ruleSpecSchema = lazySchema(() =>
  z.strictObject({
    id: z.string().regex(/^[^\s]{1,100}$/, 'a rule id is 1–100 characters without spaces'),
    decision: decisionSchema(),
    /** `|`-separated alternatives, each a glob over tool names. */
    tool: z.string().min(1),
    /** Participant id globs; absent = everyone. A single string is a one-item list. */
    participants: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    /** Input field → pattern; every field listed must match (AND). */
    match: z.record(z.string().min(1), matchPatternSchema()).optional(),
    reason: z.string().optional(),
    /** Explicit approver (participant id) for an `ask`. */
    approver: z.string().min(1).optional(),
    /**
     * A fallback rule (ask or deny) decides only where no other rule of any layer matches and no
     * policy speaks: `defaults.unmatched` with a reason, which your own allow rules can still lift.
     */
    fallback: z.boolean().optional(),
  }),
);

export type RuleSpec = z.infer<ReturnType<typeof ruleSpecSchema>>;
export type MatchPattern = z.infer<ReturnType<typeof matchPatternSchema>>;

export const RULE_FIELDS: readonly string[] = ['id', 'decision', 'tool', 'participants', 'match', 'reason', 'approver', 'fallback'];
const FILE_FIELDS: readonly string[] = ['version', 'defaults', 'rules'];
const DEFAULTS_FIELDS: readonly string[] = ['unmatched'];

export const ruleFileHeadSchema = lazySchema(() =>
  z.strictObject({
    version: z.literal(1),
    defaults: z.strictObject({ unmatched: decisionSchema().optional() }).optional(),
    rules: z.array(z.unknown()).nullable().optional(),
  }),
);

/** A zod issue as `{ path, message }`, with wording a rules author understands. */
export interface ShapeProblem {
  readonly path: (string | number)[];
  readonly message: string;
}

/** Describe the first zod issue; `data` is the validated value (to quote what was given). */
export function describeIssue(error: z.ZodError, data: unknown, where: 'file' | 'rule'): ShapeProblem {
  // An unknown field explains more (with its did-you-mean) than the missing one it replaces.
  const issue = error.issues.find((i) => i.code === 'unrecognized_keys') ?? error.issues[0]!;
  const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  const given = valueAt(data, path);
  const last = path[path.length - 1];
  if (given === undefined && issue.code !== 'unrecognized_keys') return { path, message: `missing "${String(last ?? '')}"` };
  switch (issue.code) {
    case 'unrecognized_keys': {
      const key = issue.keys[0]!;
      const fields = fieldsAt(path, where);
      return { path: [...path, key], message: `unknown field "${key}"${didYouMean(key, fields)}` };
    }
    case 'invalid_value':
      if (last === 'decision' || last === 'unmatched') {
        return { path, message: `unknown decision ${JSON.stringify(given)} (allow, ask or deny)${typeof given === 'string' ? didYouMean(given, ['allow', 'ask', 'deny']) : ''}` };
      }
      if (last === 'version') return { path, message: `unsupported version ${JSON.stringify(given)} (this Legion reads version: 1)` };
      return { path, message: issue.message };
    case 'invalid_format':
      return { path, message: issue.message };
    case 'invalid_type':
      return { path, message: `${path.join('.') || 'the file'}: ${issue.message.replace(/^Invalid input: /, '')}` };
    case 'invalid_union':
      if (path[0] === 'match') return { path, message: `match.${String(path[1])}: expected a glob string, a list of globs, { regex: "…" }, { words: [...] } or { readOnly: [...] }` };
      if (last === 'participants') return { path, message: 'participants: expected a glob or a list of globs' };
      return { path, message: `${path.join('.')}: ${issue.message}` };
    default:
      return { path, message: `${path.join('.') || 'the file'}: ${issue.message}` };
  }
}

function fieldsAt(path: readonly (string | number)[], where: 'file' | 'rule'): readonly string[] {
  if (where === 'rule') return path.length === 0 ? RULE_FIELDS : ['regex', 'words', 'readOnly'];
  return path.length === 0 ? FILE_FIELDS : DEFAULTS_FIELDS;
}

function valueAt(data: unknown, path: readonly (string | number)[]): unknown {
  let node = data;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

/** A pattern as one line for people: `git *`, `a, b`, `/regex/`, `words: git status`, `readOnly: cat, ls`. */
export function describePattern(pattern: MatchPattern): string {
  if (typeof pattern === 'string') return pattern;
  if (Array.isArray(pattern)) return pattern.join(', ');
  if ('regex' in pattern) return `/${pattern.regex}/`;
  if ('words' in pattern) return `words: ${pattern.words.join(' ')}`;
  return `readOnly: ${pattern.readOnly.join(', ')}`;
}
