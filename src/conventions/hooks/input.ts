import { isAbsolute, join } from 'node:path';
import type { HookEvent } from '../../config/hooks-schema';
import { shellEnvironment } from '../../tools/shell-env';
import { claudeNameOf } from './tool-names';

/** Who an event is about. */
export interface EventSubject {
  readonly sessionId: string;
  /** The session's root (its worktree when isolated): the input's `cwd` and absolute paths. */
  readonly root?: string;
  readonly participantId: string;
  readonly chain: readonly string[];
}

/**
 * The fields every hook gets (Claude Code's `session_id`, `transcript_path`, `cwd`,
 * `hook_event_name`), with Legion's `participant`, `chain` and `run_id` added.
 */
export function commonInput(event: HookEvent, subject: EventSubject | null, where: { root: string; runId: string; transcriptPath: (sessionId: string) => string }): Record<string, unknown> {
  return {
    session_id: subject?.sessionId ?? null,
    transcript_path: subject ? where.transcriptPath(subject.sessionId) : null,
    cwd: subject?.root ?? where.root,
    hook_event_name: event,
    permission_mode: 'default',
    run_id: where.runId,
    participant: subject?.participantId ?? null,
    chain: subject ? [...subject.chain] : [],
  };
}

/**
 * A tool call as Claude Code's hooks read it: `tool_name` is Claude Code's name when the tool
 * has one (`file_write` → `Write`), and `tool_input` carries Claude Code's field names
 * (`file_path` as an absolute path, `old_string`…) beside Legion's own; `legion_tool_name`
 * is Legion's name.
 */
export function toolInput(toolName: string, input: unknown, root: string): Record<string, unknown> {
  const own = typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  const abs = (p: unknown): unknown => (typeof p === 'string' ? (isAbsolute(p) ? p : join(root, p)) : p);
  const defined = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  let claude: Record<string, unknown> = {};
  switch (toolName) {
    case 'shell':
      claude = { command: own.command, timeout: own.timeoutMs };
      break;
    case 'file_write':
      claude = { file_path: abs(own.path), content: own.content };
      break;
    case 'file_edit':
      claude = { file_path: abs(own.path), old_string: own.oldString, new_string: own.newString, replace_all: own.replaceAll };
      break;
    case 'file_read':
      claude = { file_path: abs(own.path), offset: own.offset, limit: own.limit };
      break;
    case 'glob':
    case 'grep':
    case 'file_list':
      claude = { path: own.path === undefined ? undefined : abs(own.path), '-i': own.ignoreCase };
      break;
    default:
      claude = {};
  }
  return { tool_name: claudeNameOf(toolName) ?? toolName, legion_tool_name: toolName, tool_input: { ...own, ...defined(claude) } };
}

/**
 * The environment of a hook: the shell tool's allow-list (tools/shell-env.ts, with the config's
 * `sandbox.env` passed through; provider credentials never), plus CLAUDE_PROJECT_DIR and
 * LEGION_PROJECT_DIR (the workspace root).
 */
export function hookEnv(env: Readonly<Record<string, string | undefined>>, root: string, passThrough: readonly string[]): Record<string, string> {
  const out = shellEnvironment(env, passThrough);
  out.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  out.CLAUDE_PROJECT_DIR = root;
  out.LEGION_PROJECT_DIR = root;
  return out;
}
