import { join } from 'node:path';
import { parseRuleSources } from '../../src/authz/rules/load';
import type { RuleSet } from '../../src/authz/rules/rule-set';
import { evaluateRules, type RuleOutcome } from '../../src/authz/rules/evaluate';
import { readFileSync } from 'node:fs';

export const WORKSPACE = '/ws';
export const SHIPPED_RULES = join(import.meta.dirname, '..', '..', 'config', 'rules.yaml');

/** A RuleSet from YAML texts (lowest layer first); throws with the loader's error. */
export function rulesFrom(...texts: string[]): RuleSet {
  const loaded = parseRuleSources(texts.map((text, i) => ({ file: `layer${i + 1}.yaml`, text })));
  if (!loaded.ok) throw new Error(loaded.error);
  return loaded.ruleSet;
}

/** The loader's error for a YAML text (file name `rules.yaml`), or 'ok'. */
export function loadError(text: string, file = 'rules.yaml'): string {
  const loaded = parseRuleSources([{ file, text }]);
  return loaded.ok ? 'ok' : loaded.error;
}

let shipped: RuleSet | null = null;
/** The shipped config/rules.yaml (loaded once). */
export function shippedRules(): RuleSet {
  shipped ??= rulesFrom(readFileSync(SHIPPED_RULES, 'utf8'));
  return shipped;
}

/** Evaluate one call against a RuleSet in workspace `/ws`. */
export function decide(ruleSet: RuleSet, toolName: string, input: unknown, participantId = 'agent-a'): RuleOutcome {
  // Nothing but the repository (`.git`) exists in /ws: every other path resolves to nothing
  // (tests with real files use a temp workspace).
  return evaluateRules(ruleSet, { toolName, input, participantId, workspaceRoot: WORKSPACE, realPath: (path) => (path === '.git' ? '.git' : null) });
}

/** Shorthand for a shell command's outcome. */
export function shell(ruleSet: RuleSet, command: string, participantId = 'agent-a'): RuleOutcome {
  return decide(ruleSet, 'shell', { command }, participantId);
}

/**
 * The shipped rules under a user's deny of `curl *evil*` above an allow of `curl *`: a line whose
 * `curl http://evil.example` a deny rule sees is denied as `curl-evil-deny`; one it does not see
 * only asks, or is allowed (the deny-bypass tests' rule set).
 */
export function curlEvilRules(): RuleSet {
  curlEvil ??= rulesFrom(readFileSync(SHIPPED_RULES, 'utf8'), `version: 1
rules:
  - { id: curl-evil-deny, decision: deny, tool: shell, match: { command: "curl *evil*" } }
  - { id: curl-allow, decision: allow, tool: shell, match: { command: "curl *" } }
`);
  return curlEvil;
}
let curlEvil: RuleSet | null = null;
