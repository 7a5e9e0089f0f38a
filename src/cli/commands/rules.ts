import { homedir } from 'node:os';
import type { Command, CommandContext } from '../command';
import { LegionError } from '../../errors';
import { layoutFor } from '../../storage/layout';
import { createParticipantStore } from '../../collective/store';
import { createRunStore } from '../../session/run-store';
import { randomIds, systemClock } from '../../session/ids';
import { defaultRuleFiles, layerFile, loadRuleFiles } from '../../authz/rules/load';
import { workspaceTrustOf } from '../workspace-root';
import type { RuleSet } from '../../authz/rules/rule-set';
import type { CompiledRule } from '../../authz/rules/compile';
import { evaluateRules } from '../../authz/rules/evaluate';
import { applyPolicy } from '../../authz/policy';
import { workspaceHooksPaths } from '../../tools/sandbox/git-guard';
import { confinementOf, createAuthorizer, workspaceRealPath } from '../../authz/authorizer';
import { allowancesFile, describeMatch, readAllowances } from '../../authz/allowances';
import type { Verdict } from '../../authz/types';
import { describePattern } from '../../authz/rules/schema';
import { explainShell } from '../../authz/rules/shell-explain';

const USAGE = "legion rules check | list | explain [--json] <tool> '<json input>' [--as <participant>]";

/**
 * `legion rules check` validates every rule layer (exit 1 with the `file:line: rule <id>: …`
 * line); `list` prints the effective rules in order and the latest run's session allowances;
 * `explain` prints the decision for one call (rules and defaults only, or with `--as` the
 * participant's tools and policies too; `--json` prints exactly `{ decision, ruleId, reason }`;
 * for `shell`, the text form also shows the parse: plain words or why not, each command's words).
 */
export const rulesCommand: Command = {
  name: 'rules',
  usage: USAGE,
  summary: 'check, list or explain the authorization rules',
  flags: { json: 'boolean', as: 'value' },
  async run(context) {
    const [sub, ...rest] = context.args.positionals;
    switch (sub) {
      case 'check':
        return check(context, rest);
      case 'list':
        return list(context, rest);
      case 'explain':
        return explain(context, rest);
      default:
        throw new LegionError(sub ? `unknown rules command "${sub}"; usage: ${USAGE}` : `usage: ${USAGE}`, 2);
    }
  },
};

async function load(context: CommandContext): Promise<{ ruleSet: RuleSet; files: string[] } | null> {
  const trust = await workspaceTrustOf(context);
  const layers = defaultRuleFiles(context.appDir, context.workspaceRoot, context.io.env, trust);
  const files = layers.map(layerFile);
  const loaded = await loadRuleFiles(layers);
  if (!loaded.ok) {
    context.io.stderr(`${loaded.error}\n`);
    return null;
  }
  return { ruleSet: loaded.ruleSet, files };
}

function noArgs(rest: readonly string[], what: string): void {
  if (rest.length) throw new LegionError(`legion rules ${what} takes no arguments (got "${rest[0]}")`, 2);
}

async function check(context: CommandContext, rest: readonly string[]): Promise<number> {
  noArgs(rest, 'check');
  const loaded = await load(context);
  if (!loaded) return 1;
  const { ruleSet, files } = loaded;
  for (const file of files) {
    const present = ruleSet.files.find((f) => f.file === file);
    const ignored = present?.ignored ? ` (${present.ignored} allow rule(s) and defaults ignored: untrusted workspace, see legion trust)` : '';
    context.io.stdout(`${file}: ${present ? `${present.rules} rule${present.rules === 1 ? '' : 's'}${ignored}` : 'not present'}\n`);
  }
  context.io.stdout(`ok: ${ruleSet.rules.length} rules; calls no rule or policy matches: ${ruleSet.unmatched}\n`);
  return 0;
}

async function list(context: CommandContext, rest: readonly string[]): Promise<number> {
  noArgs(rest, 'list');
  const loaded = await load(context);
  if (!loaded) return 1;
  const { ruleSet } = loaded;
  const out = context.io.stdout;
  let currentFile = '';
  for (const rule of ruleSet.rules) {
    if (rule.file !== currentFile) {
      currentFile = rule.file;
      out(`${currentFile}\n`);
    }
    out(`  ${rule.line.toString().padStart(4)}  ${rule.id.padEnd(26)} ${rule.decision.padEnd(5)}  ${summarize(rule)}\n`);
  }
  if (ruleSet.rules.length === 0) out('no rules\n');
  out(`unmatched: ${ruleSet.unmatched}\n`);
  out(await allowancesSummary(context));
  return 0;
}

function summarize(rule: CompiledRule): string {
  const { spec } = rule;
  const parts = [spec.tool];
  if (spec.participants !== undefined) parts.push(`as ${[spec.participants].flat().join(',')}`);
  for (const [field, pattern] of Object.entries(spec.match ?? {})) {
    const text = Array.isArray(pattern) && pattern.length > 3 ? `${pattern.slice(0, 3).join(', ')} (+${pattern.length - 3})` : describePattern(pattern);
    parts.push(`${field}: ${text.length > 70 ? `${text.slice(0, 67)}...` : text}`);
  }
  if (rule.approver) parts.push(`approver ${rule.approver}`);
  if (rule.fallback) parts.push('fallback: only where no other rule matches');
  return parts.join('  ');
}

async function allowancesSummary(context: CommandContext): Promise<string> {
  const layout = layoutFor(context.workspaceRoot);
  let latest: { id: string } | undefined;
  try {
    latest = (await createRunStore(layout, systemClock, randomIds).list())[0];
  } catch {
    latest = undefined;
  }
  if (!latest) return 'session allowances: none (no run yet)\n';
  if (!(await workspaceTrustOf(context)).trusted) return `session allowances of run ${latest.id}: ignored (untrusted workspace, see legion trust)\n`;
  const { allowances, issues } = await readAllowances(allowancesFile(layout, latest.id));
  const lines = issues.map((i) => `  warning: ${i}\n`);
  if (allowances.length === 0) return `session allowances of run ${latest.id}: none\n${lines.join('')}`;
  for (const a of allowances) {
    lines.push(`  ${a.rule.id}  ${a.participantId} in ${a.sessionId}: ${describeMatch(a.rule.tool, a.rule.match)}${a.grantedBy ? ` (by ${a.grantedBy})` : ''}\n`);
  }
  return `session allowances of run ${latest.id}:\n${lines.join('')}`;
}

async function explain(context: CommandContext, rest: readonly string[]): Promise<number> {
  const [toolName, json, extra] = rest;
  if (!toolName || json === undefined) throw new LegionError(`usage: ${USAGE}`, 2);
  if (extra !== undefined) throw new LegionError(`unexpected argument "${extra}" (quote the JSON input as one argument)`, 2);
  let input: unknown;
  try {
    input = JSON.parse(json);
  } catch (error) {
    throw new LegionError(`invalid JSON input: ${(error as Error).message}`, 2);
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new LegionError(`the input must be a JSON object, e.g. '{"path":"src/a.ts"}'`, 2);
  }
  const as = context.args.flags.get('as');
  if (as === true) throw new LegionError('--as needs a participant id', 2);
  const loaded = await load(context);
  if (!loaded) return 1;
  const { ruleSet } = loaded;
  const { workspaceRoot } = context;

  let verdict: Verdict;
  if (as === undefined) {
    const confinement = confinementOf(input, workspaceRoot);
    verdict = confinement
      ? { decision: 'deny', ruleId: null, reason: confinement, source: 'confinement' }
      : applyPolicy(evaluateRules(ruleSet, { toolName, input, participantId: 'user', workspaceRoot, homeDir: homedir(), realPath: workspaceRealPath(workspaceRoot) }), null, ruleSet.unmatched);
  } else {
    const participants = await createParticipantStore(layoutFor(workspaceRoot)).loadAll(await workspaceTrustOf(context));
    if (!participants.some((p) => p.id === as)) {
      const known = participants.map((p) => p.id).join(', ');
      throw new LegionError(`unknown participant "${as}" (${known ? `known: ${known}` : 'no collective here: run legion init'})`, 1);
    }
    const authorize = createAuthorizer({ ruleSet, workspaceRoot, getParticipant: (id) => participants.find((p) => p.id === id), realPath: workspaceRealPath(workspaceRoot), homeDir: homedir(), gitConfigPaths: (root) => workspaceHooksPaths(root, context.io.env) });
    verdict = authorize({ toolName, input, participantId: as, sessionId: 'explain', chain: [] });
  }

  if (context.args.flags.has('json')) {
    context.io.stdout(`${JSON.stringify({ decision: verdict.decision, ruleId: verdict.ruleId, reason: verdict.reason })}\n`);
    return 0;
  }
  const rule = verdict.ruleId ? ruleSet.rules.find((r) => r.id === verdict.ruleId) : undefined;
  const out = context.io.stdout;
  out(`decision: ${verdict.decision}\n`);
  out(`rule:     ${verdict.ruleId ? `${verdict.ruleId}${rule ? ` (${rule.file}:${rule.line})` : ''}` : '(none)'}\n`);
  out(`source:   ${verdict.source}${as === undefined ? ' (rules and defaults only; add --as <participant> for tools and policies)' : ` (as ${as})`}\n`);
  out(`reason:   ${verdict.reason}\n`);
  if (verdict.approver) out(`approver: ${verdict.approver}\n`);
  const command = (input as Record<string, unknown>).command;
  if (toolName === 'shell' && typeof command === 'string') {
    const query = { toolName, input, participantId: typeof as === 'string' ? as : 'user', workspaceRoot, realPath: workspaceRealPath(workspaceRoot) };
    for (const line of explainShell(ruleSet, query, command)) out(`${line}\n`);
  }
  return 0;
}
