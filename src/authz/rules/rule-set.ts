import type { Decision } from '../types';
import type { CompiledRule } from './compile';

/** Rules applicable to one tool name, split by decision, each in file order. */
export interface ToolTiers {
  readonly deny: readonly CompiledRule[];
  readonly ask: readonly CompiledRule[];
  readonly allow: readonly CompiledRule[];
  /** Fallback rules (ask or deny), in file order: consulted only when no rule above matches. */
  readonly fallback: readonly CompiledRule[];
}

/** The loaded rules of every layer, in evaluation order, plus the unmatched default. Immutable. */
export interface RuleSet {
  readonly rules: readonly CompiledRule[];
  /** Decision when neither a rule nor a policy speaks (`defaults.unmatched`, default ask). */
  readonly unmatched: Decision;
  /** Files that were present, in layer order, with their rule counts. Each file loaded and its rules; `ignored`: how many allow rules and defaults an untrusted workspace's file had that were dropped. */
  readonly files: readonly { readonly file: string; readonly rules: number; readonly ignored?: number }[];
  /** Candidate rules for a tool name (memoized; the result depends only on the name). */
  tiersFor(toolName: string): ToolTiers;
}

const CACHE_LIMIT = 2000;

/** Build a RuleSet: rules are pre-indexed by tool name on first use of each name. */
export function createRuleSet(rules: readonly CompiledRule[], unmatched: Decision, files: RuleSet['files']): RuleSet {
  const cache = new Map<string, ToolTiers>();
  const build = (toolName: string): ToolTiers => {
    const deny: CompiledRule[] = [];
    const ask: CompiledRule[] = [];
    const allow: CompiledRule[] = [];
    const fallback: CompiledRule[] = [];
    for (const rule of rules) {
      if (!rule.matchesTool(toolName)) continue;
      (rule.fallback ? fallback : rule.decision === 'deny' ? deny : rule.decision === 'ask' ? ask : allow).push(rule);
    }
    return { deny, ask, allow, fallback };
  };
  return {
    rules,
    unmatched,
    files,
    tiersFor(toolName) {
      let tiers = cache.get(toolName);
      if (!tiers) {
        tiers = build(toolName);
        if (cache.size < CACHE_LIMIT) cache.set(toolName, tiers);
      }
      return tiers;
    },
  };
}
