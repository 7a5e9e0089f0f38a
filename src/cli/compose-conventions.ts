import { isAbsolute, relative } from 'node:path';
import micromatch from 'micromatch';
import type { LegionConfig } from '../config/schema';
import type { RuleSet } from '../authz/rules/rule-set';
import { secretPathPatterns } from '../authz/rules/secret-paths';
import { DEFAULT_SECRET_PATTERNS } from '../tools/sandbox/secret-patterns';
import { createProjectInstructions, type ProjectInstructions, type RefusePath } from '../conventions/instructions';
import { createNestedInstructions } from '../conventions/nested-instructions';
import type { AfterCall } from '../runtime/ports';
import type { PromptExtras } from '../runtime/stream';

/** What the formats users already have add to a run (docs/conventions.md). */
export interface ConventionParts {
  readonly instructions: ProjectInstructions;
  readonly promptExtras: PromptExtras;
  readonly afterCall: AfterCall;
}

/** A workspace path the rules keep from the file tools (secret paths) is never read into a prompt. */
export function secretPathRefusal(ruleSet: RuleSet): RefusePath {
  const fromRules = secretPathPatterns(ruleSet);
  const patterns = fromRules.length > 0 ? fromRules : [...DEFAULT_SECRET_PATTERNS];
  return (rel) => (micromatch.isMatch(rel, patterns, { dot: true, nocase: true }) ? 'a secret path (the rules keep it from the file tools)' : null);
}

export function composeConventions(options: {
  readonly config: LegionConfig;
  readonly workspaceRoot: string;
  readonly userDir: string;
  readonly ruleSet: RuleSet;
  readonly notice: (level: 'info' | 'warn', message: string) => void;
}): ConventionParts {
  const refuse = secretPathRefusal(options.ruleSet);
  const files = options.config.instructions.files;
  const instructions = createProjectInstructions({ workspaceRoot: options.workspaceRoot, userDir: options.userDir, files, refuse, notice: options.notice });
  const nested = createNestedInstructions({ workspaceRoot: options.workspaceRoot, files, refuse, notice: options.notice });
  const promptExtras: PromptExtras = () => instructions.section();
  const afterCall: AfterCall = async (turn, call, result) => {
    if (result.isError || call.pathFields.length === 0) return [];
    const input = call.input as Record<string, unknown>;
    const paths = call.pathFields.map((f) => input?.[f]).filter((p): p is string => typeof p === 'string')
      .map((p) => (isAbsolute(p) ? relative(options.workspaceRoot, p) : p));
    return nested.notesFor(turn.sessionId, paths, () => turn.history().flatMap((m) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))));
  };
  return { instructions, promptExtras, afterCall };
}
