import type { RuleSet } from './rule-set';

/**
 * The path globs the rules keep from the file tools: the `path` patterns of every deny rule
 * that applies to `file_read` for everyone (the shipped `no-secrets` rule and any the user
 * adds). The shell sandbox hides files matching them (docs/sandbox.md). Regex patterns and
 * participant-specific rules are left out: a sandbox is the same for every agent.
 */
export function secretPathPatterns(ruleSet: RuleSet): string[] {
  const out = new Set<string>();
  for (const rule of ruleSet.tiersFor('file_read').deny) {
    if (rule.matchesParticipant !== null) continue;
    const path = rule.spec.match?.path;
    if (typeof path === 'string') out.add(path);
    else if (Array.isArray(path)) for (const p of path) out.add(p);
  }
  return [...out];
}
