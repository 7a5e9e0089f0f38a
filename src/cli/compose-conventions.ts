import { isAbsolute, relative } from 'node:path';
import micromatch from 'micromatch';
import type { LegionConfig } from '../config/schema';
import type { ConfigFiles } from '../config/load';
import type { EventBus } from '../events/bus';
import type { RuleSet } from '../authz/rules/rule-set';
import { secretPathPatterns } from '../authz/rules/secret-paths';
import { DEFAULT_SECRET_PATTERNS } from '../tools/sandbox/secret-patterns';
import { createProjectInstructions, type ProjectInstructions, type RefusePath } from '../conventions/instructions';
import { createNestedInstructions } from '../conventions/nested-instructions';
import { createSkills, skillRoots, type Skills } from '../conventions/skills';
import { holdsTool } from '../authz/authorizer';
import { defaultHookFiles, loadHooks, type HookEntry } from '../conventions/hooks/load';
import { createHooksTrust, hooksTrustFile } from '../conventions/hooks/trust';
import { createHookEngine } from '../conventions/hooks/engine';
import { hookEnv } from '../conventions/hooks/input';
import type { AfterCall, TurnHooks } from '../runtime/ports';
import type { PromptExtras } from '../runtime/stream';

/** What the formats users already have add to a run (docs/conventions.md). */
export interface ConventionParts {
  readonly instructions: ProjectInstructions;
  /** The skills for the `skill` tool and every system prompt. */
  readonly skills: Skills;
  readonly promptExtras: PromptExtras;
  readonly afterCall: AfterCall;
  /** Absent when no layer defines a hook. */
  readonly hooks?: TurnHooks;
  readonly hookEntries: readonly HookEntry[];
  /** Said at start: hook files' problems, workspace hooks not trusted. */
  readonly warnings: string[];
  /** Notification and PreCompact hooks follow the bus from here on. */
  attach(bus: Pick<EventBus, 'subscribe'>): void;
}

/** A workspace path the rules keep from the file tools (secret paths) is never read into a prompt. */
export function secretPathRefusal(ruleSet: RuleSet): RefusePath {
  const fromRules = secretPathPatterns(ruleSet);
  const patterns = fromRules.length > 0 ? fromRules : [...DEFAULT_SECRET_PATTERNS];
  return (rel) => (micromatch.isMatch(rel, patterns, { dot: true, nocase: true }) ? 'a secret path (the rules keep it from the file tools)' : null);
}

export async function composeConventions(options: {
  readonly config: LegionConfig;
  readonly configFiles: ConfigFiles;
  readonly workspaceRoot: string;
  readonly userDir: string;
  readonly runId: string;
  readonly transcriptPath: (sessionId: string) => string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly ruleSet: RuleSet;
  readonly notice: (level: 'info' | 'warn', message: string, sessionId?: string) => void;
}): Promise<ConventionParts> {
  const root = options.workspaceRoot;
  const refuse = secretPathRefusal(options.ruleSet);
  const files = options.config.instructions.files;
  const instructions = createProjectInstructions({ workspaceRoot: root, userDir: options.userDir, files, refuse, notice: options.notice });
  const nested = createNestedInstructions({ workspaceRoot: root, files, refuse, notice: options.notice });
  const skills = createSkills(skillRoots(root, options.userDir), { workspaceRoot: root, refuse });
  const promptExtras: PromptExtras = (agent) => {
    const parts = [instructions.section(), skills.section(holdsTool(agent.tools, 'skill'))].filter((p) => p !== '');
    return parts.join('\n\n');
  };

  const loaded = await loadHooks(defaultHookFiles(options.configFiles, root));
  const warnings = [...loaded.warnings, ...skills.problems()];
  const hookEntries = loaded.hooks;
  const ownHooks = hookEntries.filter((h) => h.fromWorkspace);
  const trust = ownHooks.length > 0 ? createHooksTrust({ file: hooksTrustFile(options.userDir), workspaceRoot: root, env: options.env }) : null;
  if (trust) {
    const check = await trust.check(hookEntries);
    if (!check.trusted) {
      const files = [...new Set(ownHooks.map((h) => relative(root, h.file)))].join(', ');
      warnings.push(`${ownHooks.length} hook${ownHooks.length > 1 ? 's' : ''} of this workspace (${files}) will not run: ${check.reason}; review with \`legion hooks list\`, then \`legion hooks trust\``);
    }
  }
  const engine = hookEntries.length > 0
    ? createHookEngine({ hooks: hookEntries, root, runId: options.runId, transcriptPath: options.transcriptPath, env: hookEnv(options.env, root, options.config.sandbox.env), trust, notice: options.notice })
    : null;

  const afterCall: AfterCall = async (turn, call, result, signal) => {
    const notes: string[] = [];
    if (!result.isError && call.pathFields.length > 0) {
      const input = call.input as Record<string, unknown>;
      const paths = call.pathFields.map((f) => input?.[f]).filter((p): p is string => typeof p === 'string')
        .map((p) => (isAbsolute(p) ? relative(turn.root ?? root, p) : p));
      const history = (): string[] => turn.history().flatMap((m) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])));
      notes.push(...nested.notesFor(turn.sessionId, paths, history, turn.root));
    }
    if (engine) notes.push(...(await engine.postToolUse({ ...turn, ...call }, result, signal)));
    return notes;
  };

  return {
    instructions, skills, promptExtras, afterCall, hookEntries, warnings,
    ...(engine ? { hooks: { preToolUse: engine.preToolUse, postToolUse: engine.postToolUse, promptSubmit: engine.promptSubmit, stop: engine.stop } } : {}),
    attach(bus) {
      if (!engine) return;
      if (engine.has('Notification')) {
        bus.subscribe('approval-request', (event) => engine.fire('Notification', { sessionId: event.sessionId, participantId: event.participantId, chain: event.chain },
          { message: `${event.participantId} needs your approval to use ${event.toolName}`, title: 'Legion', notification_type: 'permission_prompt' }, ['permission_prompt']));
      }
      if (engine.has('PreCompact')) {
        bus.subscribe('compaction', (event) => engine.fire('PreCompact', { sessionId: event.sessionId, participantId: event.participantId, chain: [] },
          { trigger: 'auto', custom_instructions: '' }, ['auto']));
      }
    },
  };
}
