import type { Decision } from '../types';
import type { CompiledField, CompiledRule } from './compile';
import type { RuleSet, ToolTiers } from './rule-set';
import { FILE_TOOLS, TOOL_NAME_PATTERN } from './known-tools';
import { normalizeRulePath } from './paths';
import { MAX_SHELL_LENGTH, splitShell } from './shell-split';
import { strictViews } from './shell-views';

/** One call as the rules see it. */
export interface RuleQuery {
  readonly toolName: string;
  readonly input: unknown;
  readonly participantId: string;
  /** Absolute workspace root, for path normalization. */
  readonly workspaceRoot: string;
}

/** What the rules say. `decision: null` = no rule matched (policies and defaults decide). */
export interface RuleOutcome {
  readonly decision: Decision | null;
  readonly ruleId: string | null;
  readonly reason: string;
  readonly approver?: string;
  /** With `decision: null`: the first fallback rule that matches, deciding in place of `defaults.unmatched`. */
  readonly fallback?: RuleOutcome;
}

type Lookup = (field: string, isPath: boolean, strict: boolean) => readonly string[] | null;

/**
 * Evaluate the rules for one call. Pure: the result depends only on the arguments.
 * Among matching rules deny > ask > allow (first in file order within a decision).
 * A tool name outside `[A-Za-z0-9_.:-]` (a look-alike such as Cyrillic `а`) is denied.
 * `shell` commands are split (shell-split.ts): deny if the whole command or any part
 * (in any of its strict views) is denied; ask if it cannot be split or anything asks;
 * allow only if every part is allowed as written (a part redirecting to or from a file only
 * by a rule whose `command` pattern mentions `>` or `<`); otherwise no decision.
 */
export function evaluateRules(ruleSet: RuleSet, query: RuleQuery): RuleOutcome {
  const { toolName } = query;
  if (!TOOL_NAME_PATTERN.test(toolName)) {
    return { decision: 'deny', ruleId: null, reason: `tool name ${JSON.stringify(toolName)} has characters outside [A-Za-z0-9_.:-]` };
  }
  const tiers = ruleSet.tiersFor(toolName);
  const input = isRecord(query.input) ? query.input : {};
  const lookup = inputLookup(input, query.workspaceRoot, toolName);
  const ruled = toolName === 'shell' && typeof input.command === 'string'
    ? evaluateShell(tiers, query.participantId, input.command, lookup)
    : evaluateWhole(tiers, query.participantId, lookup);
  if (ruled.decision !== null) return ruled;
  // No rule decided: the first matching fallback rule (ask or deny) stands in for defaults.unmatched.
  for (const rule of tiers.fallback) if (matches(rule, query.participantId, lookup)) return { ...ruled, fallback: outcome(rule) };
  return ruled;
}

function evaluateWhole(tiers: ToolTiers, participantId: string, lookup: Lookup): RuleOutcome {
  for (const rule of tiers.deny) if (matches(rule, participantId, lookup)) return outcome(rule);
  for (const rule of tiers.ask) if (matches(rule, participantId, lookup)) return outcome(rule);
  for (const rule of tiers.allow) if (matches(rule, participantId, lookup)) return outcome(rule);
  return { decision: null, ruleId: null, reason: 'no rule matches' };
}

function evaluateShell(tiers: ToolTiers, participantId: string, command: string, base: Lookup): RuleOutcome {
  // Bound the regex work an agent can cause with one call: a huge command line is not matched at all.
  if (command.length > MAX_SHELL_LENGTH) {
    return { decision: 'ask', ruleId: null, reason: `cannot check this shell command safely (longer than ${MAX_SHELL_LENGTH} characters)` };
  }
  const split = splitShell(command);
  const views = new Set<string>([command]);
  for (const part of split.commands) for (const view of strictViews(part)) views.add(view);

  const viewList = [...views];
  const lowerViews = viewList.map((v) => v.toLowerCase());
  const strictHit = (rules: readonly CompiledRule[]): RuleOutcome | null => {
    for (const rule of rules) {
      const field = rule.commandField;
      if (!field) {
        if (matchesExceptCommand(rule, participantId, base)) return outcome(rule);
        continue;
      }
      for (let v = 0; v < viewList.length; v++) {
        if (field.prefix && !lowerViews[v]!.startsWith(field.prefix)) continue;
        const view = viewList[v]!;
        if (field.test(view) && matchesExceptCommand(rule, participantId, base)) return outcome(rule, view === command ? undefined : view);
      }
    }
    return null;
  };

  const denied = strictHit(tiers.deny);
  if (denied) return denied;
  if (!split.ok) {
    const asked = strictHit(tiers.ask);
    const why = `cannot check this shell command safely (${split.error})`;
    return { decision: 'ask', ruleId: asked?.ruleId ?? null, reason: asked ? `${asked.reason}; ${why}` : why, ...(asked?.approver ? { approver: asked.approver } : {}) };
  }
  const asked = strictHit(tiers.ask);
  if (asked) return asked;
  if (split.commands.length === 0) return { decision: null, ruleId: null, reason: 'empty command' };
  let first: CompiledRule | null = null;
  for (const part of split.commands) {
    let found: CompiledRule | null = null;
    for (const rule of tiers.allow) {
      const field = rule.commandField;
      if (part.fileRedirect && field && !field.mentionsRedirect) continue;
      if (field && ((field.prefix && !part.text.startsWith(field.prefix)) || !field.test(part.text))) continue;
      if (!matchesExceptCommand(rule, participantId, base)) continue;
      found = rule;
      break;
    }
    if (!found) return { decision: null, ruleId: null, reason: `no rule allows \`${part.text}\`` };
    first ??= found;
  }
  const rule = first!;
  return { decision: 'allow', ruleId: rule.id, reason: rule.reason ?? `every part allowed (${rule.id}${split.commands.length > 1 ? ', …' : ''})` };
}

/** Participant and every condition but `command` (a file redirection needs an allow whose `command` mentions `>`/`<`). */
function matchesExceptCommand(rule: CompiledRule, participantId: string, lookup: Lookup): boolean {
  if (rule.matchesParticipant && !rule.matchesParticipant(participantId)) return false;
  return fieldsMatch(rule.otherFields, rule.decision !== 'allow', lookup);
}

function matches(rule: CompiledRule, participantId: string, lookup: Lookup): boolean {
  if (rule.matchesParticipant && !rule.matchesParticipant(participantId)) return false;
  return fieldsMatch(rule.fields, rule.decision !== 'allow', lookup);
}

function fieldsMatch(fields: readonly CompiledField[], strict: boolean, lookup: Lookup): boolean {
  for (const field of fields) {
    const values = lookup(field.name, field.isPath, strict);
    if (!values) return false;
    let hit = false;
    for (const value of values) {
      if (field.test(value)) {
        hit = true;
        break;
      }
    }
    if (!hit) return false;
  }
  return true;
}

function outcome(rule: CompiledRule, view?: string): RuleOutcome {
  const reason = (rule.reason ?? `${rule.decision} by rule ${rule.id}`) + (view !== undefined ? ` (matched \`${view}\`)` : '');
  return rule.approver ? { decision: rule.decision, ruleId: rule.id, reason, approver: rule.approver } : { decision: rule.decision, ruleId: rule.id, reason };
}

/**
 * Whether one rule matches a call as a whole, without shell splitting (used for session
 * allowances, whose `command` is the exact command line the user approved).
 */
export function ruleMatchesCall(rule: CompiledRule, query: RuleQuery): boolean {
  if (!TOOL_NAME_PATTERN.test(query.toolName) || !rule.matchesTool(query.toolName)) return false;
  const input = isRecord(query.input) ? query.input : {};
  return matches(rule, query.participantId, inputLookup(input, query.workspaceRoot, query.toolName));
}

/**
 * Field values of the input as rules see them: strings as given (path fields normalized;
 * an absent `path` of a file tool is the workspace root `.`),
 * numbers and booleans as text; for strict rules an array yields its string items (so a
 * deny still catches `path: ['.env']`); anything else matches no pattern.
 */
function inputLookup(input: Record<string, unknown>, workspaceRoot: string, toolName: string): Lookup {
  const cache = new Map<string, readonly string[] | null>();
  return (field, isPath, strict) => {
    const key = `${strict ? 's' : 'a'}${field}`;
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    let value = Object.hasOwn(input, field) ? input[field] : undefined;
    if (value === undefined && field === 'path' && FILE_TOOLS.has(toolName)) value = '.';
    let values: string[] | null = null;
    if (typeof value === 'string') values = [value];
    else if (typeof value === 'number' || typeof value === 'boolean') values = [String(value)];
    else if (strict && Array.isArray(value)) values = value.filter((v): v is string => typeof v === 'string');
    if (values && isPath) values = values.map((v) => normalizeRulePath(v, workspaceRoot));
    cache.set(key, values);
    return values;
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
