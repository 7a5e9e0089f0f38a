import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { posix, join } from 'node:path';
import { z } from 'zod';
import type { CallToAuthorize, Verdict } from './types';
import type { Layout } from '../storage/layout';
import { parseJsonl } from '../storage/jsonl';
import { compileRule, type CompiledRule } from './rules/compile';
import { ruleMatchesCall } from './rules/evaluate';
import { escapeGlob, escapeRegex } from './rules/glob';
import { isFileTool, TOOL_NAME_PATTERN } from './rules/known-tools';
import { normalizeRulePath } from './rules/paths';
import { describePattern, ruleSpecSchema, type MatchPattern, type RuleSpec } from './rules/schema';
import { lazySchema } from '../storage/lazy-schema';
import { surelyAbsent } from '../storage/absent';

/**
 * Session allowances: "approve and allow the same for this session" (docs/design.md#the-tui, `a` in the
 * approval queue) adds an allow rule scoped as narrowly as the call allows:
 *   - the exact tool and the participant who asked, in the session where it asked;
 *   - the key argument: `shell` → the exact command line (whole, not split);
 *     `file_read|file_write|file_edit|file_delete` → the file's directory (`dir/**`;
 *     top-level files → `*`); `file_list|glob|grep` → the searched directory and below;
 *     `communicator` → the `targetId`; `spawn_agent|modify_agent|retire_agent` → the `id`;
 *     other tools → every top-level text/number/boolean field, exactly.
 * An allowance only turns an `ask` into `allow` (authorizer.ts); it never lifts a deny, and a
 * file tool's never lifts an ask rule's own ask (liftsAsk).
 * Allowances live in memory for the run; `onAdd` lets the composition root append them to
 * `runs/<runId>/allowances.jsonl` (see `allowancesFile`), which `legion rules list` reads.
 */
export interface Allowance {
  readonly rule: RuleSpec;
  readonly participantId: string;
  readonly sessionId: string;
  /** ISO time it was granted. */
  readonly createdAt: string;
  /** Who granted it (`user`, `agent:<id>`…), when known. */
  readonly grantedBy?: string;
}

export interface AllowanceSet {
  /** Add an allowance for a call like this one; the same allowance twice is kept once. */
  add(call: CallToAuthorize, workspaceRoot: string, options?: { grantedBy?: string; at?: Date }): { ok: true; allowance: Allowance } | { ok: false; error: string };
  /** The allowance covering this call, or null. */
  find(call: CallToAuthorize, workspaceRoot: string): Allowance | null;
  list(): readonly Allowance[];
}

const PATH_IN_DIR_TOOLS = new Set(['file_read', 'file_write', 'file_edit', 'file_delete']);
const ID_TOOLS = new Set(['spawn_agent', 'modify_agent', 'retire_agent']);

/** The narrowly scoped allow rule for a call (not yet validated: `createAllowanceSet().add` validates). */
export function allowanceFor(call: CallToAuthorize, workspaceRoot: string): RuleSpec {
  const input = typeof call.input === 'object' && call.input !== null && !Array.isArray(call.input) ? (call.input as Record<string, unknown>) : {};
  const match: Record<string, MatchPattern> = {};
  const tool = call.toolName;
  if (tool === 'shell') {
    if (typeof input.command === 'string') match.command = { regex: escapeRegex(input.command) };
  } else if (PATH_IN_DIR_TOOLS.has(tool)) {
    if (typeof input.path === 'string') {
      const dir = posix.dirname(normalizeRulePath(input.path, workspaceRoot));
      match.path = dir === '.' ? '*' : `${escapeGlob(dir)}/**`;
    }
  } else if (isFileTool(tool)) {
    const dir = normalizeRulePath(typeof input.path === 'string' ? input.path : '.', workspaceRoot);
    match.path = dir === '.' ? '**' : [escapeGlob(dir), `${escapeGlob(dir)}/**`];
  } else if (tool === 'communicator') {
    if (typeof input.targetId === 'string') match.targetId = escapeGlob(input.targetId);
  } else if (ID_TOOLS.has(tool)) {
    if (typeof input.id === 'string') match.id = escapeGlob(input.id);
  } else {
    for (const [field, value] of Object.entries(input)) {
      if (typeof value === 'string' && value !== '') match[field] = { regex: escapeRegex(value) };
      else if (typeof value === 'number' || typeof value === 'boolean') match[field] = { regex: escapeRegex(String(value)) };
    }
  }
  const digest = createHash('sha256').update(JSON.stringify([call.participantId, call.sessionId, tool, match])).digest('hex').slice(0, 10);
  return {
    id: `session-allow-${digest}`,
    decision: 'allow',
    tool,
    participants: [escapeGlob(call.participantId)],
    ...(Object.keys(match).length > 0 ? { match } : {}),
    reason: `allowed for this session (${describeMatch(tool, match)})`,
  };
}

/**
 * Whether `allowance` (found for a call) may turn that call's `ask` verdict into `allow`. A file
 * tool's allowance covers a directory, wider than the call the user approved: it stands in for
 * the fallback ask that call met (`writes-ask`…), a policy's or the default's, never for a rule
 * that asks about a narrower set of paths for a reason of its own (`git-internals-ask`: "always
 * asks, even if you allow writes"), whose calls the approved one did not meet. The other
 * allowances are the approved call itself (an exact command line, a target, an id, its fields):
 * they lift whatever asked it.
 */
export function liftsAsk(allowance: Allowance, verdict: Pick<Verdict, 'source' | 'fallback'>): boolean {
  if (!isFileTool(allowance.rule.tool)) return true;
  return verdict.fallback === true || verdict.source === 'policy' || verdict.source === 'default';
}

interface Entry {
  readonly allowance: Allowance;
  readonly compiled: CompiledRule;
}

export function createAllowanceSet(options: { initial?: readonly Allowance[]; onAdd?: (allowance: Allowance) => void } = {}): AllowanceSet {
  const entries: Entry[] = [];
  const insert = (allowance: Allowance): { ok: true; allowance: Allowance } | { ok: false; error: string } => {
    const existing = entries.find((e) => e.allowance.rule.id === allowance.rule.id && e.allowance.sessionId === allowance.sessionId);
    if (existing) return { ok: true, allowance: existing.allowance };
    const shape = ruleSpecSchema().safeParse(allowance.rule);
    if (!shape.success) return { ok: false, error: `allowance: ${shape.error.issues[0]?.message ?? 'invalid'}` };
    const compiled = compileRule(shape.data, '(session allowance)', 0);
    if (!compiled.ok) return { ok: false, error: `allowance: ${compiled.problem.message}` };
    entries.push({ allowance, compiled: compiled.rule });
    return { ok: true, allowance };
  };
  for (const allowance of options.initial ?? []) insert(allowance);
  return {
    add(call, workspaceRoot, addOptions = {}) {
      if (!TOOL_NAME_PATTERN.test(call.toolName)) return { ok: false, error: `allowance: tool name ${JSON.stringify(call.toolName)} is not a plain tool name` };
      const before = entries.length;
      const result = insert({
        rule: allowanceFor(call, workspaceRoot),
        participantId: call.participantId,
        sessionId: call.sessionId,
        createdAt: (addOptions.at ?? new Date()).toISOString(),
        ...(addOptions.grantedBy ? { grantedBy: addOptions.grantedBy } : {}),
      });
      if (result.ok && entries.length > before) options.onAdd?.(result.allowance);
      return result;
    },
    find(call, workspaceRoot) {
      for (const { allowance, compiled } of entries) {
        if (allowance.sessionId !== call.sessionId || allowance.participantId !== call.participantId) continue;
        if (ruleMatchesCall(compiled, { toolName: call.toolName, input: call.input, participantId: call.participantId, workspaceRoot })) return allowance;
      }
      return null;
    },
    list: () => entries.map((e) => e.allowance),
  };
}

/** `runs/<runId>/allowances.jsonl`: one Allowance per line, appended as they are granted. */
export function allowancesFile(layout: Layout, runId: string): string {
  return join(layout.runDir(runId), 'allowances.jsonl');
}

const allowanceSchema = lazySchema(() =>
  z.object({
    rule: ruleSpecSchema(),
    participantId: z.string(),
    sessionId: z.string(),
    createdAt: z.string(),
    grantedBy: z.string().optional(),
  }),
);

/** Read persisted allowances (missing file → none; a bad line is reported in `issues`, never fatal). */
export async function readAllowances(file: string): Promise<{ allowances: Allowance[]; issues: string[] }> {
  if (surelyAbsent(file)) return { allowances: [], issues: [] };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { allowances: [], issues: [] };
    return { allowances: [], issues: [`${file}: cannot read: ${(error as Error).message}`] };
  }
  const read = parseJsonl<Allowance>(text, file, (value) => {
    const result = allowanceSchema().safeParse(value);
    return result.success ? { ok: true, value: result.data as Allowance } : { ok: false, error: result.error.issues[0]?.message ?? 'invalid' };
  });
  return { allowances: read.records, issues: read.issues.map((i) => i.message) };
}

/** One-line summary of an allowance's scope, e.g. `shell: git push origin main`. */
export function describeMatch(tool: string, match: RuleSpec['match'] | undefined): string {
  const parts = Object.entries(match ?? {}).map(([field, pattern]) => {
    if (typeof pattern === 'string') return `${field} ${pattern}`;
    if (Array.isArray(pattern)) return `${field} ${pattern.join(' | ')}`;
    if ('regex' in pattern) return `${field} = ${pattern.regex.replace(/\\(.)/g, '$1')}`;
    return `${field} ${describePattern(pattern)}`;
  });
  return parts.length ? `${tool}: ${parts.join(', ')}` : tool;
}
