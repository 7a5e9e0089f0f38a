import type { ToolUseBlock } from '../model/message';
import type { Verdict } from '../authz/types';
import type { EventBus } from '../events/bus';
import type { Tool, ToolCatalog } from '../tools/types';
import { messageOf } from '../errors';
import { holdsTool } from '../authz/authorizer';
import { Batch, failed } from './call-state';
import type { Journal } from './journal';
import type { AuditSink, Authorize, DenialTracker, TurnHooks } from './ports';
import type { Turn } from './turn';
import { describeInputProblem, summaryOf, unavailableTool, verdictDenial } from './format';

/**
 * Phase 1 of a batch, the pre-scan (authorize): every call of the message is announced
 * (`tool-call-start`), then checked — arguments parse, tool granted, input valid,
 * `authorize` → allow (`run`) | deny (`done`) | ask (`ask`). Refusals and rule decisions
 * are audited; consecutive denials are tracked (a note for the agent).
 */
export interface Prescan {
  /** A new batch for `turn` (its results reported as `tool-call-end`). */
  open(turn: Turn): Batch;
  /** Pre-scan the calls of a new message into `batch` (PreToolUse hooks run after the rules, before `settle`). */
  scan(turn: Turn, batch: Batch, uses: readonly ToolUseBlock[], inputErrors: ReadonlyMap<string, string>): Promise<void>;
  /** The building blocks, for the resume pre-pass (resume-prepass.ts). */
  announce(turn: Turn, use: ToolUseBlock): void;
  /** Refuse what cannot be authorized (bad input, tool not held); else the tool and validated input. */
  screen(turn: Turn, batch: Batch, use: ToolUseBlock, inputError?: string): { tool: Tool; input: unknown } | undefined;
  authorize(turn: Turn, use: ToolUseBlock, input: unknown): Verdict;
  /** Add the call per its verdict (audited unless it asks). */
  settle(turn: Turn, batch: Batch, call: { use: ToolUseBlock; tool: Tool; input: unknown }, verdict: Verdict): void;
  /** Count a denial or an allowance of `turn`'s agent; the note joins the batch's once. */
  track(turn: Turn, batch: Batch, toolName: string, outcome: 'denied' | 'allowed'): void;
}

export interface PrescanDeps {
  readonly bus: EventBus;
  readonly tools: ToolCatalog;
  readonly authorize: Authorize;
  readonly audit: AuditSink;
  readonly denials?: DenialTracker;
  readonly notice: Journal['notice'];
  /** PreToolUse hooks (docs/conventions.md#hooks); not run for a call the rules denied. */
  readonly hooks?: Pick<TurnHooks, 'preToolUse'>;
  /** The worktree an isolated session works in (docs/worktrees.md): its calls are authorized against it. */
  readonly isolatedRoot?: (sessionId: string) => string | undefined;
}

export function createPrescan(deps: PrescanDeps): Prescan {
  const { bus, tools, audit } = deps;

  const open = (turn: Turn): Batch =>
    new Batch(({ use, result }) => bus.emit({
      type: 'tool-call-end', sessionId: turn.session.id, participantId: turn.agent.id, toolUseId: use.id, name: use.name,
      isError: result.isError === true, summary: summaryOf(result),
      ...(result.failure ? { failure: result.failure } : {}),
    }));

  const track: Prescan['track'] = (turn, batch, toolName, outcome) => {
    const sessionId = turn.session.id;
    const note = deps.denials?.record(sessionId, turn.agent.id, outcome);
    if (note && !batch.notes.includes(note)) {
      batch.notes.push(note);
      deps.notice('warn', `${turn.agent.id} keeps being denied in ${sessionId} (last: ${toolName}); it was told to change approach or ask its caller`, sessionId);
    }
  };

  const announce: Prescan['announce'] = (turn, use) => {
    const sandboxed = tools.get(use.name)?.sandboxed;
    bus.emit({ type: 'tool-call-start', sessionId: turn.session.id, participantId: turn.agent.id, toolUseId: use.id, name: use.name, input: use.input, ...(sandboxed !== undefined ? { sandboxed } : {}) });
  };

  const screen: Prescan['screen'] = (turn, batch, use, inputError) => {
    if (inputError !== undefined) {
      batch.endNew(use, failed('invalid-input', describeInputProblem(use.name, `the arguments are not valid JSON (${inputError})`)));
      return undefined;
    }
    const tool = tools.get(use.name);
    if (!tool || !holdsTool(turn.agent.tools, use.name)) {
      const reason = unavailableTool(use.name, turn.agent.id, turn.agent.tools);
      audit({ sessionId: turn.session.id, participantId: turn.agent.id, chain: turn.chain, toolName: use.name, input: use.input, decision: 'deny', decidedBy: 'policy', ruleId: null, reason });
      batch.endNew(use, failed('denied', reason));
      track(turn, batch, use.name, 'denied');
      return undefined;
    }
    const parsed = tool.schema.safeParse(use.input);
    if (!parsed.success) {
      const problems = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; ');
      batch.endNew(use, failed('invalid-input', describeInputProblem(use.name, problems)));
      return undefined;
    }
    return { tool, input: parsed.data };
  };

  const authorize: Prescan['authorize'] = (turn, use, input) => {
    try {
      const isolatedRoot = deps.isolatedRoot?.(turn.session.id);
      return deps.authorize({
        toolName: use.name, input, participantId: turn.agent.id, sessionId: turn.session.id, chain: turn.chain,
        ...(isolatedRoot !== undefined ? { isolatedRoot } : {}),
      });
    } catch (error) {
      return { decision: 'deny', ruleId: null, reason: `authorization failed: ${messageOf(error)}`, source: 'rule' };
    }
  };

  const settle: Prescan['settle'] = (turn, batch, call, verdict) => {
    if (verdict.decision === 'ask') {
      batch.add({ phase: 'ask', ...call, verdict });
      return;
    }
    // The agent's own policy (toolAuthorizations, tools) is 'policy'; rules, their defaults, confinement and session allowances are 'rule'.
    const decidedBy = verdict.source === 'policy' || verdict.source === 'tools' ? 'policy' : 'rule';
    audit({
      sessionId: turn.session.id, participantId: turn.agent.id, chain: turn.chain, toolName: call.use.name, input: call.input,
      decision: verdict.decision, decidedBy, ruleId: verdict.ruleId, reason: verdict.reason,
    });
    if (verdict.decision === 'deny') {
      batch.endNew(call.use, failed('denied', verdictDenial(verdict)));
      track(turn, batch, call.use.name, 'denied');
    } else {
      batch.add({ phase: 'run', ...call });
      track(turn, batch, call.use.name, 'allowed');
    }
  };

  return {
    open,
    announce,
    screen,
    authorize,
    settle,
    track,
    async scan(turn, batch, uses, inputErrors) {
      for (const use of uses) {
        announce(turn, use);
        const checked = screen(turn, batch, use, inputErrors.get(use.id));
        if (!checked) continue;
        let verdict = authorize(turn, use, checked.input);
        if (deps.hooks && verdict.decision !== 'deny' && !turn.controller.signal.aborted) {
          verdict = await deps.hooks.preToolUse({
            sessionId: turn.session.id, participantId: turn.agent.id, initiatorId: turn.session.key.initiatorId, chain: turn.chain,
            toolName: use.name, toolUseId: use.id, input: checked.input,
          }, verdict, turn.controller.signal);
        }
        settle(turn, batch, { use, ...checked }, verdict);
      }
    },
  };
}
