import type { HookEvent } from '../../config/hooks-schema';
import type { Verdict } from '../../authz/types';
import { personOnly } from '../../authz/policy';
import type { ToolResult } from '../../tools/types';
import { messageOf } from '../../errors';
import type { HookEntry } from './load';
import type { HooksTrust } from './trust';
import { runHookCommand, type CommandOutcome } from './run-command';
import { hostPath } from '../../tools/host-path';
import { commonInput, toolInput, type EventSubject } from './input';
import { claudeNamesOf, matcherSelects } from './tool-names';

type Json = Record<string, unknown>;

export interface HookEngineDeps {
  readonly hooks: readonly HookEntry[];
  readonly root: string;
  readonly runId: string;
  readonly transcriptPath: (sessionId: string) => string;
  /** The whole environment of a hook (allow-listed, input.ts `hookEnv`). */
  readonly env: Readonly<Record<string, string>>;
  /** Required when a workspace file defines hooks: they run only while `check` says trusted. */
  readonly trust: Pick<HooksTrust, 'check'> | null;
  readonly notice: (level: 'info' | 'warn', message: string, sessionId?: string) => void;
}

interface Ran {
  readonly hook: HookEntry;
  readonly outcome: CommandOutcome;
  /** stdout parsed, when exit 0 and it is a JSON object. */
  readonly json: Json | null;
}

/** A call as the turn's hooks see it. */
export interface CallSubject extends EventSubject {
  readonly initiatorId: string;
  readonly toolName: string;
  readonly toolUseId: string;
  readonly input: unknown;
}

/**
 * Claude-Code-compatible hooks (docs/conventions.md#hooks): picks the hooks of an event whose
 * matcher selects it, runs them in parallel (each bounded by its timeout), and reads their
 * answers: exit 0 goes on (stdout JSON may decide), exit 2 blocks with stderr as the reason,
 * any other end is a warning notice and decides nothing. Workspace hooks run only while
 * trusted (checked before each run: a rewritten hook script stops them). Never rejects.
 */
export function createHookEngine(deps: HookEngineDeps) {
  const where = { root: deps.root, runId: deps.runId, transcriptPath: deps.transcriptPath };
  let saidUntrusted = '';

  /**
   * The selected hooks that may run. Workspace hooks run only while trusted; when they were
   * trusted and changed since (a rewritten script), `changed` says why: PreToolUse then refuses
   * the calls they guard instead of letting them through unguarded.
   */
  const permitted = async (selected: readonly HookEntry[], sessionId?: string): Promise<{ hooks: HookEntry[]; changed?: string }> => {
    if (!selected.some((h) => h.fromWorkspace)) return { hooks: [...selected] };
    const check = deps.trust ? await deps.trust.check(deps.hooks).catch((error: unknown) => ({ trusted: false as const, changed: false, reason: messageOf(error) })) : null;
    if (check?.trusted) return { hooks: [...selected] };
    const reason = check ? check.reason : 'no trust store';
    if (reason !== saidUntrusted) {
      saidUntrusted = reason;
      deps.notice('warn', `the workspace's hooks did not run (${reason}): review them with \`legion hooks list\`, then \`legion hooks trust\``, sessionId);
    }
    return { hooks: selected.filter((h) => !h.fromWorkspace), ...(check?.changed ? { changed: reason } : {}) };
  };

  const label = (hook: HookEntry): string => `${hook.event} hook "${hook.command.length > 60 ? `${hook.command.slice(0, 57)}...` : hook.command}" (${hook.file})`;

  const run = async (event: HookEvent, names: readonly string[], input: Json, signal: AbortSignal, sessionId?: string): Promise<Ran[] & { changed?: string }> => {
    const { hooks: selected, changed } = await permitted(deps.hooks.filter((h) => h.event === event && matcherOk(h, names)), sessionId);
    if (selected.length === 0) return Object.assign([], changed ? { changed } : {});
    const text = JSON.stringify(input);
    const ran = await Promise.all(selected.map(async (hook): Promise<Ran> => {
      // The process runs in the workspace root, whose scripts trust covers (a worktree's copies are not checked).
      // A hook of the user's own config is not reviewed: its programs are never found in a folder of the workspace.
      const env = hook.fromWorkspace ? deps.env : { ...deps.env, PATH: hostPath(deps.env.PATH ?? '', deps.root) };
      const outcome = await runHookCommand({ command: hook.command, input: text, cwd: deps.root, env, timeoutMs: hook.timeoutMs, signal });
      let json: Json | null = null;
      switch (outcome.kind) {
        case 'exit':
          if (outcome.code === 0) json = parseJson(outcome.stdout);
          else if (outcome.code !== 2) deps.notice('warn', `${label(hook)} exited ${outcome.code}${firstLine(outcome.stderr)}; going on`, sessionId);
          break;
        case 'timeout':
          deps.notice('warn', `${label(hook)} did not finish within ${hook.timeoutMs / 1000} s and was stopped; going on`, sessionId);
          break;
        case 'error':
          deps.notice('warn', `${label(hook)} could not start: ${outcome.message}; going on`, sessionId);
          break;
        case 'aborted':
          break;
      }
      return { hook, outcome, json };
    }));
    return Object.assign(ran, changed ? { changed } : {});
  };

  return {
    /** Whether any hook is defined for `event` (callers skip building inputs otherwise). */
    has: (event: HookEvent): boolean => deps.hooks.some((h) => h.event === event),

    async preToolUse(call: CallSubject, verdict: Verdict, signal: AbortSignal): Promise<Verdict> {
      if (!deps.hooks.some((h) => h.event === 'PreToolUse')) return verdict;
      const input = { ...commonInput('PreToolUse', call, where), ...toolInput(call.toolName, call.input, call.root ?? deps.root), tool_use_id: call.toolUseId };
      const ran = await run('PreToolUse', toolNames(call.toolName), input, signal, call.sessionId);
      if (ran.changed) {
        return { decision: 'deny', ruleId: null, reason: `the workspace's hooks that guard ${call.toolName} changed since they were trusted (${ran.changed}); refused until the user runs \`legion hooks trust\``, source: 'hook' };
      }
      let ask: string | null = null;
      let allow: string | null = null;
      for (const r of ran) {
        const decision = preDecision(r);
        if (decision?.kind === 'deny') {
          return { decision: 'deny', ruleId: null, reason: `blocked by a PreToolUse hook (${r.hook.file}): ${decision.reason}`, source: 'hook' };
        }
        if (decision?.kind === 'ask') ask ??= decision.reason;
        if (decision?.kind === 'allow') allow ??= decision.reason;
      }
      if (ask !== null) {
        return { decision: 'ask', ruleId: verdict.ruleId, reason: `a PreToolUse hook asks${ask ? `: ${ask}` : ''}${verdict.decision === 'ask' ? `; ${verdict.reason}` : ''}`, source: 'hook', ...(verdict.approver ? { approver: verdict.approver } : {}), ...(verdict.notPlain ? { notPlain: verdict.notPlain } : {}) };
      }
      // A hook's allow answers only what no rule or policy decided (a fallback rule, the `unmatched`
      // default), and never a shell line that is not plain words (only a person does: docs/shell-rules.md).
      if (allow !== null && verdict.decision === 'ask' && !personOnly(verdict) && (verdict.source === 'default' || verdict.fallback === true)) {
        return { decision: 'allow', ruleId: null, reason: `allowed by a PreToolUse hook${allow ? `: ${allow}` : ''}`, source: 'hook' };
      }
      return verdict;
    },

    async postToolUse(call: CallSubject, result: ToolResult, signal: AbortSignal): Promise<string[]> {
      if (!deps.hooks.some((h) => h.event === 'PostToolUse')) return [];
      const input = {
        ...commonInput('PostToolUse', call, where), ...toolInput(call.toolName, call.input, call.root ?? deps.root), tool_use_id: call.toolUseId,
        tool_response: { content: result.content, is_error: result.isError === true, success: result.isError !== true, ...(result.failure ? { failure: result.failure } : {}) },
      };
      const notes: string[] = [];
      for (const r of await run('PostToolUse', toolNames(call.toolName), input, signal, call.sessionId)) {
        const said = blockReason(r) ?? null;
        if (said) notes.push(`PostToolUse hook (${r.hook.file}) on ${call.toolName}: ${said}`);
        const context = additionalContext(r.json);
        if (context) notes.push(context);
      }
      return notes;
    },

    async promptSubmit(turn: EventSubject & { initiatorId: string }, text: string, firstInSession: boolean, signal: AbortSignal): Promise<{ context: string[]; block?: string }> {
      const context: string[] = [];
      if (firstInSession && deps.hooks.some((h) => h.event === 'SessionStart')) {
        for (const r of await run('SessionStart', ['startup'], { ...commonInput('SessionStart', turn, where), source: 'startup' }, signal, turn.sessionId)) {
          const said = contextOf(r);
          if (said) context.push(said);
        }
      }
      if (deps.hooks.some((h) => h.event === 'UserPromptSubmit')) {
        for (const r of await run('UserPromptSubmit', [], { ...commonInput('UserPromptSubmit', turn, where), prompt: text }, signal, turn.sessionId)) {
          const block = blockReason(r);
          if (block !== undefined) return { context, block };
          const said = contextOf(r);
          if (said) context.push(said);
        }
      }
      return { context };
    },

    async stop(turn: EventSubject & { initiatorId: string }, active: boolean, signal: AbortSignal): Promise<string | null> {
      const event: HookEvent = turn.initiatorId === 'user' ? 'Stop' : 'SubagentStop';
      if (!deps.hooks.some((h) => h.event === event)) return null;
      for (const r of await run(event, [], { ...commonInput(event, turn, where), stop_hook_active: active }, signal, turn.sessionId)) {
        const block = blockReason(r);
        if (block !== undefined) return block;
      }
      return null;
    },

    /** Notification and PreCompact: told, not asked; never awaited by a turn. */
    fire(event: 'Notification' | 'PreCompact', subject: EventSubject | null, extra: Json, names: readonly string[]): void {
      if (!deps.hooks.some((h) => h.event === event)) return;
      void run(event, names, { ...commonInput(event, subject, where), ...extra }, new AbortController().signal, subject?.sessionId);
    },
  };
}

export type HookEngine = ReturnType<typeof createHookEngine>;

/** The names a matcher may select a call by: Legion's, and every Claude Code name of the tool. */
const toolNames = (name: string): string[] => [name, ...claudeNamesOf(name)];

function matcherOk(hook: HookEntry, names: readonly string[]): boolean {
  // Events without a subject to match (UserPromptSubmit, Stop…) ignore matchers, as in Claude Code.
  if (names.length === 0) return true;
  return matcherSelects(hook.matcher, names);
}

function parseJson(stdout: string): Json | null {
  const text = stdout.trim();
  if (!text.startsWith('{')) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

const firstLine = (text: string): string => {
  const line = text.trim().split('\n')[0]?.trim();
  return line ? `: ${line.slice(0, 200)}` : '';
};

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const specific = (json: Json | null): Json | null => {
  const h = json?.hookSpecificOutput;
  return typeof h === 'object' && h !== null && !Array.isArray(h) ? (h as Json) : null;
};

/** Exit 2 (stderr), `decision: "block"` (reason) or `continue: false` (stopReason): the reason; else undefined. */
function blockReason(r: Ran): string | undefined {
  if (r.outcome.kind === 'exit' && r.outcome.code === 2) return r.outcome.stderr.trim() || 'blocked by a hook (no reason given)';
  if (!r.json) return undefined;
  if (r.json.continue === false) return str(r.json.stopReason) ?? 'a hook stopped it (continue: false)';
  if (r.json.decision === 'block') return str(r.json.reason) ?? 'blocked by a hook (no reason given)';
  return undefined;
}

function additionalContext(json: Json | null): string | undefined {
  return str(specific(json)?.additionalContext);
}

/** SessionStart and UserPromptSubmit: plain stdout of exit 0, or `hookSpecificOutput.additionalContext`. */
function contextOf(r: Ran): string | undefined {
  if (r.outcome.kind !== 'exit' || r.outcome.code !== 0) return undefined;
  if (r.json) return additionalContext(r.json);
  const text = r.outcome.stdout.trim();
  return text || undefined;
}

/** PreToolUse: exit 2 and deny block; `permissionDecision` (or the older `decision: approve | block`). */
function preDecision(r: Ran): { kind: 'deny' | 'ask' | 'allow'; reason: string } | null {
  if (r.outcome.kind === 'exit' && r.outcome.code === 2) return { kind: 'deny', reason: r.outcome.stderr.trim() || 'no reason given' };
  const json = r.json;
  if (!json) return null;
  if (json.continue === false) return { kind: 'deny', reason: str(json.stopReason) ?? 'continue: false' };
  const h = specific(json);
  const decision = str(h?.permissionDecision) ?? (json.decision === 'approve' ? 'allow' : json.decision === 'block' ? 'deny' : undefined);
  const reason = str(h?.permissionDecisionReason) ?? str(json.reason) ?? '';
  if (decision === 'deny' || decision === 'ask' || decision === 'allow') return { kind: decision, reason: decision === 'deny' && !reason ? 'no reason given' : reason };
  return null;
}
