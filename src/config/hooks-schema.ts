import { z } from 'zod';
import { lazySchema } from '../storage/lazy-schema';

/** The hook events Legion runs, with Claude Code's names (docs/conventions.md#hooks). */
export const HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'SessionStart', 'Stop', 'SubagentStop', 'PreCompact', 'Notification'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Default timeout of one hook command, in seconds (Claude Code's). */
export const HOOK_TIMEOUT_DEFAULT_S = 60;

const hookCommand = () =>
  z.strictObject({
  /** Only `command` runs; another type (Claude Code's `prompt`) is skipped with a warning. */
  type: z.string().min(1),
  command: z.string().min(1).optional(),
  /** Seconds. */
  timeout: z.number().positive().max(3600).optional(),
  });

const matcherGroup = lazySchema(() => z.strictObject({
  /** A tool name, `A|B`, a regular expression, `*` or empty (every one); Claude Code's tool names match Legion's tools. */
  matcher: z.string().optional(),
  hooks: z.array(hookCommand()),
}));

/** `hooks:` of a config layer: event → matcher groups, as in Claude Code's settings. */
export const hooksSchema = lazySchema(() =>
  z.strictObject(
    Object.fromEntries(HOOK_EVENTS.map((event) => [event, z.array(matcherGroup()).optional()])) as Record<HookEvent, z.ZodOptional<z.ZodArray<ReturnType<typeof matcherGroup>>>>,
  ),
);
export type HooksConfig = z.infer<ReturnType<typeof hooksSchema>>;
export type HookMatcherGroup = z.infer<ReturnType<typeof matcherGroup>>;

/** `instructions:`: which files are the project's instructions (docs/conventions.md#project-instructions). */
export const instructionsSchema = lazySchema(() => z.strictObject({
  files: z
    .array(z.string().min(1).regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$))[^\0]+$/, 'a path relative to the workspace, without ".."'))
    .min(1)
    .default(['AGENTS.md', 'CLAUDE.md', 'GEMINI.md']),
}));
