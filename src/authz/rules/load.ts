import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Decision } from '../types';
import { parseYamlSource, type YamlSource } from '../../config/yaml-source';
import { compileRule, type CompiledRule } from './compile';
import { createRuleSet, type RuleSet } from './rule-set';
import { describeIssue, ruleFileHeadSchema, ruleSpecSchema } from './schema';
import { ONE_SHOT } from '../../storage/zod-validate';
import type { WorkspaceTrust } from '../../storage/workspace-trust';
import { surelyAbsent } from '../../storage/absent';

export type RuleLoad = { ok: true; ruleSet: RuleSet } | { ok: false; error: string };

/**
 * One rules file's text (null = the file does not exist). `tightenOnly`: a layer that may only
 * make decisions stricter (the rules file of an untrusted workspace, docs/workspace-trust.md):
 * its `deny` and `ask` rules apply, its `allow` rules, its `defaults` and the `approver` of its
 * ask rules are ignored.
 */
export interface RuleSource {
  readonly file: string;
  readonly text: string | null;
  readonly tightenOnly?: boolean;
}

/** A rules file to load; a bare path is a full layer. */
export type RuleLayer = string | { readonly file: string; readonly tightenOnly: boolean };

export const layerFile = (layer: RuleLayer): string => (typeof layer === 'string' ? layer : layer.file);

/**
 * The rule layers, lowest first: the shipped `config/rules.yaml`, the user's
 * `~/.config/legion/rules.yaml` (honouring XDG_CONFIG_HOME), the project's `.legion/rules.yaml`.
 * `trust` is required: the project's file only tightens in an untrusted workspace.
 */
export function defaultRuleFiles(appDir: string, workspaceRoot: string, env: Readonly<Record<string, string | undefined>>, trust: WorkspaceTrust): RuleLayer[] {
  const configHome = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return [join(appDir, 'config', 'rules.yaml'), join(configHome, 'legion', 'rules.yaml'), { file: join(workspaceRoot, '.legion', 'rules.yaml'), tightenOnly: !trust.trusted }];
}

/**
 * Read, validate and compile rule files (lowest priority first; missing files are skipped).
 * Rules are concatenated in file order; a later file's `defaults` override. The first
 * problem stops the load with `file:line: rule <id>: what is wrong`; nothing is skipped.
 */
export async function loadRuleFiles(files: readonly RuleLayer[]): Promise<RuleLoad> {
  const sources: RuleSource[] = [];
  for (const layer of files) {
    const file = layerFile(layer);
    const tightenOnly = typeof layer !== 'string' && layer.tightenOnly;
    if (surelyAbsent(file)) continue;
    try {
      sources.push({ file, text: await readFile(file, 'utf8'), ...(tightenOnly ? { tightenOnly } : {}) });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') continue;
      return { ok: false, error: `${file}: cannot read: ${(error as Error).message}` };
    }
  }
  return parseRuleSources(sources);
}

/** Validate already-read rule texts (lowest priority first). Synchronous; used by tests and benches. */
export function parseRuleSources(sources: readonly RuleSource[]): RuleLoad {
  const rules: CompiledRule[] = [];
  const files: { file: string; rules: number }[] = [];
  let unmatched: Decision = 'ask';
  for (const { file, text, tightenOnly } of sources) {
    if (text === null) continue;
    const result = compiledShipped(text, file) ?? compileText(text, file);
    if (!result.ok) return result;
    const kept = tightenOnly ? tighteningOnly(result.rules) : result.rules;
    rules.push(...kept);
    files.push({ file, rules: kept.length, ...(tightenOnly ? { ignored: result.rules.length - kept.length + (result.unmatched ? 1 : 0) } : {}) });
    if (result.unmatched && !tightenOnly) unmatched = result.unmatched;
  }
  return { ok: true, ruleSet: createRuleSet(rules, unmatched, files) };
}

function compileText(text: string, file: string): FileCompile {
  const parsed = parseYamlSource(text, file);
  return parsed.ok ? compileFile(parsed.source) : { ok: false, error: parsed.error };
}

/**
 * Rule files compiled while the start-up snapshot was built (`precompileShippedRules`), by their
 * exact text: the shipped `config/rules.yaml`, which every start compiles before its first frame
 * (its globs and expressions, ~5 ms). Only texts that compiled; a start whose file has another
 * text compiles it. Compiled rules hold no state (matchers are pure functions of their input).
 */
const shipped = new Map<string, { readonly rules: readonly CompiledRule[]; readonly unmatched: Decision | undefined }>();

/** The compiled rules of `text` if the snapshot holds them, with `file` as where they were defined. */
function compiledShipped(text: string, file: string): FileCompile | undefined {
  const found = shipped.get(text);
  if (!found) return undefined;
  const { rules, unmatched } = found;
  return { ok: true, rules: rules.map((rule) => (rule.file === file ? rule : { ...rule, file })), unmatched };
}

/**
 * Compile a shipped rules file and keep the result for starts that load the same text (called
 * while the start-up snapshot builds: src/cli/snapshot-warm.ts). Returns whether it compiled.
 */
export function precompileShippedRules(text: string, file: string): boolean {
  const result = compileText(text, file);
  if (result.ok) shipped.set(text, { rules: result.rules, unmatched: result.unmatched });
  return result.ok;
}

/** The rules of a layer that may only tighten: deny and ask, an ask without its `approver` (the cascade decides who answers). */
function tighteningOnly(rules: readonly CompiledRule[]): CompiledRule[] {
  return rules.filter((r) => r.decision !== 'allow').map((r) => (r.approver === undefined ? r : { ...r, approver: undefined }));
}

type FileCompile = { ok: true; rules: CompiledRule[]; unmatched: Decision | undefined } | { ok: false; error: string };

function compileFile(source: YamlSource): FileCompile {
  const { file, data } = source;
  const at = (path: (string | number)[]) => `${file}:${source.lineOf(path) ?? 1}`;
  // An empty file is an empty layer.
  if (data === null || (typeof data === 'object' && !Array.isArray(data) && Object.keys(data).length === 0)) {
    return { ok: true, rules: [], unmatched: undefined };
  }
  if (typeof data !== 'object' || Array.isArray(data)) {
    return { ok: false, error: `${file}:1: a rules file is a mapping with version: 1, defaults and rules` };
  }
  const head = ruleFileHeadSchema().safeParse(data, ONE_SHOT);
  if (!head.success) {
    const problem = describeIssue(head.error, data, 'file');
    return { ok: false, error: `${at(problem.path)}: ${problem.message}` };
  }
  const rawRules = head.data.rules ?? [];
  const rules: CompiledRule[] = [];
  const seen = new Map<string, number>();
  for (let i = 0; i < rawRules.length; i++) {
    const raw = rawRules[i];
    const rulePath = ['rules', i];
    const id = raw && typeof raw === 'object' && typeof (raw as { id?: unknown }).id === 'string' ? (raw as { id: string }).id : null;
    const label = id ? `rule ${id}` : `rule #${i + 1}`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
      return { ok: false, error: `${at(rulePath)}: ${label}: expected a mapping with id, decision and tool` };
    }
    const shape = ruleSpecSchema().safeParse(raw, ONE_SHOT);
    if (!shape.success) {
      const problem = describeIssue(shape.error, raw, 'rule');
      return { ok: false, error: `${at([...rulePath, ...problem.path])}: ${label}: ${problem.message}` };
    }
    const spec = shape.data;
    const line = source.lineOf(rulePath) ?? 1;
    const previous = seen.get(spec.id);
    if (previous !== undefined) {
      return { ok: false, error: `${at([...rulePath, 'id'])}: ${label}: duplicate id (also at line ${previous})` };
    }
    seen.set(spec.id, line);
    const compiled = compileRule(spec, file, line);
    if (!compiled.ok) return { ok: false, error: `${at([...rulePath, ...compiled.problem.path])}: ${label}: ${compiled.problem.message}` };
    rules.push(compiled.rule);
  }
  return { ok: true, rules, unmatched: head.data.defaults?.unmatched };
}
