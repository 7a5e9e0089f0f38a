import type { ToolResultBlock, ToolUseBlock } from '../model/message';
import type { Verdict } from '../authz/types';
import type { ApprovalRequest } from '../authz/approvals';
import { abandon, MAY_HAVE_RUN, READ_ONLY_TOOLS, SECRET_NOT_KEPT, type ResumePoint } from './resume';
import { REDACTED } from '../authz/redact';
import type { Tool, ToolContext, ToolResult } from '../tools/types';
import { messageOf } from '../errors';
import { holdsTool } from '../authz/authorizer';
import type { Hub, SessionSlot } from './hub';
import type { Turn } from './turn';
import { decideAsks } from './approval-phase';
import { runScheduled } from './parallel';
import { summaryOf, describeInputProblem, rejectionText, verdictDenial, unavailableTool } from './format';
import { interruptedText } from './agent-loop';

/** One call of the batch as it moves through the phases. */
export interface PlannedCall {
  readonly use: ToolUseBlock;
  tool?: Tool;
  /** The validated input (what is authorized is exactly what runs). */
  input?: unknown;
  verdict?: Verdict;
  /** The approval request of an `ask` (raised in phase 2, or found again when a turn resumes). */
  request?: ApprovalRequest;
  /** Set once the call's outcome is known; a call with a result is not run. */
  result?: ToolResult;
}

export interface BatchOutcome {
  /** One result per call, in call order. */
  readonly results: ToolResultBlock[];
  /** Text notes for the agent (denial-loop advice), appended after the results. */
  readonly notes: string[];
  /**
   * Legion is stopping while requests of this batch wait for the user (a turn of the user's
   * lane, no caller): append nothing, the calls stay open on disk and the next start resumes
   * them (resume.ts). `results` is empty then.
   */
  readonly leftOpen?: boolean;
}

/**
 * Execute the tool calls of one assistant message (docs/design.md#authorization, issue 4):
 * 1. pre-scan every call: arguments parse, tool granted, input valid, `authorize` → allow | deny | ask;
 * 2. raise every `ask` together and wait for each decision (see approval-phase);
 * 3. run what is allowed (independent calls in parallel, see parallel.ts).
 * Denied and rejected calls get error results naming the reason; every decision is audited.
 * On cancel, calls without an outcome are answered "interrupted by the user". Never throws.
 * `resumed` (a batch resumed after a restart, see resume.ts): a call with a request from
 * before is not asked again — its request is re-offered (or its decision taken) — unless the
 * rules now deny it, which withdraws the request. A batch resumed at stage `running` runs
 * only its re-attached communicator calls and read-only calls again; the rest may have run
 * and are answered so. `turn.stage` tells shutdown which phase the batch is in.
 */
export async function executeBatch(
  hub: Hub, slot: SessionSlot, turn: Turn, uses: readonly ToolUseBlock[], inputErrors: ReadonlyMap<string, string>,
  resumed?: ResumePoint,
): Promise<BatchOutcome> {
  try {
    return await runBatch(hub, slot, turn, uses, inputErrors, resumed);
  } finally {
    turn.stage = undefined;
  }
}

async function runBatch(
  hub: Hub, slot: SessionSlot, turn: Turn, uses: readonly ToolUseBlock[], inputErrors: ReadonlyMap<string, string>,
  resumed: ResumePoint | undefined,
): Promise<BatchOutcome> {
  const { env } = hub;
  const sessionId = turn.session.id;
  const participantId = turn.agent.id;
  const calls: PlannedCall[] = uses.map((use) => ({ use }));
  const notes: string[] = [];

  const finish = (call: PlannedCall, result: ToolResult): void => {
    if (call.result) return;
    call.result = result;
    env.bus.emit({
      type: 'tool-call-end', sessionId, participantId, toolUseId: call.use.id, name: call.use.name,
      isError: result.isError === true, summary: summaryOf(result),
    });
  };
  const track = (call: PlannedCall, outcome: 'denied' | 'allowed'): void => {
    const note = env.denials?.record(sessionId, participantId, outcome);
    if (note && !notes.includes(note)) {
      notes.push(note);
      hub.notice('warn', `${participantId} keeps being denied in ${sessionId} (last: ${call.use.name}); it was told to change approach or ask its caller`, sessionId);
    }
  };

  // Phase 1: pre-scan.
  for (const call of calls) {
    const { use } = call;
    env.bus.emit({ type: 'tool-call-start', sessionId, participantId, toolUseId: use.id, name: use.name, input: use.input });
    const inputError = inputErrors.get(use.id);
    if (inputError !== undefined) {
      finish(call, { content: describeInputProblem(use.name, `the arguments are not valid JSON (${inputError})`), isError: true });
      continue;
    }
    const rerun = resumed && (resumed.stage === 'approvals' || READ_ONLY_TOOLS.has(use.name));
    if (rerun && JSON.stringify(use.input ?? null).includes(REDACTED)) {
      // What is on disk is scrubbed: running it now would use "[REDACTED]" instead of the key.
      finish(call, { content: SECRET_NOT_KEPT, isError: true });
      continue;
    }
    const tool = env.tools.get(use.name);
    if (!tool || !holdsTool(turn.agent.tools, use.name)) {
      const reason = unavailableTool(use.name, turn.agent.id, turn.agent.tools);
      env.audit({ sessionId, participantId, chain: turn.chain, toolName: use.name, input: use.input, decision: 'deny', decidedBy: 'policy', ruleId: null, reason });
      finish(call, { content: reason, isError: true });
      track(call, 'denied');
      continue;
    }
    const parsed = tool.schema.safeParse(use.input);
    if (!parsed.success) {
      const problems = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; ');
      finish(call, { content: describeInputProblem(use.name, problems), isError: true });
      continue;
    }
    call.tool = tool;
    call.input = parsed.data;
    let verdict: Verdict;
    try {
      verdict = env.authorize({ toolName: use.name, input: parsed.data, participantId, sessionId, chain: turn.chain });
    } catch (error) {
      verdict = { decision: 'deny', ruleId: null, reason: `authorization failed: ${messageOf(error)}`, source: 'rule' };
    }
    const earlier = resumed?.requests.get(use.id);
    if (earlier && verdict.decision !== 'deny') {
      call.request = earlier;
      verdict = { decision: 'ask', ruleId: earlier.ruleId, reason: earlier.reason, source: 'rule' };
    }
    call.verdict = verdict;
    if (verdict.decision === 'ask') continue;
    // The agent's own policy (toolAuthorizations, tools) is 'policy'; rules, their defaults, confinement and session allowances are 'rule'.
    const decidedBy = verdict.source === 'policy' || verdict.source === 'tools' ? 'policy' : 'rule';
    env.audit({ sessionId, participantId, chain: turn.chain, toolName: use.name, input: parsed.data, decision: verdict.decision, decidedBy, ruleId: verdict.ruleId, reason: verdict.reason });
    if (verdict.decision === 'deny') {
      finish(call, { content: verdictDenial(verdict), isError: true });
      track(call, 'denied');
    } else {
      track(call, 'allowed');
    }
  }

  // A request found again for a call that now ends otherwise (rules deny it now, tool gone, bad input) is withdrawn.
  if (resumed) {
    for (const call of calls) {
      const earlier = resumed.requests.get(call.use.id);
      if (earlier && call.result) env.approvals.withdraw([earlier.requestId], `withdrawn after the restart: ${call.result.content}`);
    }
  }

  // A batch that was running when Legion stopped: what may have run is not repeated.
  const attached = new Set<string>();
  if (resumed?.stage === 'running') {
    for (const call of calls) {
      if (call.result || !call.tool) continue;
      const outcome = call.request ? env.approvals.get(call.request.requestId)?.outcome : undefined;
      if (call.request && outcome?.decision !== 'approved') {
        // Decided (and audited) before the stop, not approved: it never ran.
        finish(call, { content: outcome ? rejectionText(outcome) : MAY_HAVE_RUN, isError: true });
        continue;
      }
      const child = resumed.children.get(call.use.id);
      if (child) {
        hub.reattach.set(call.use.id, child);
        attached.add(call.use.id);
      } else if (!READ_ONLY_TOOLS.has(call.use.name)) {
        finish(call, { content: MAY_HAVE_RUN, isError: true });
        continue;
      }
      if (call.request) call.verdict = { ...call.verdict!, decision: 'allow' }; // approved before the stop
    }
  }
  const keptAtStop = (): boolean => hub.stopping && hub.keepAtStop.has(turn);
  /** Resumed turns below this batch that will not run after all are answered and expired. */
  const releaseChildren = (): void => {
    for (const [useId, child] of resumed?.children ?? []) {
      const consumed = attached.has(useId) && !hub.reattach.has(useId);
      hub.reattach.delete(useId);
      if (!consumed && !hub.stopping) abandon(hub, child);
    }
  };

  // Phase 2: approvals, raised together.
  const asks = calls.filter((c) => c.verdict?.decision === 'ask' && !c.result);
  if (asks.length > 0) {
    hub.setStatus(slot, 'waiting-approval', `${asks.length} approval${asks.length > 1 ? 's' : ''}`);
    turn.stage = 'approvals';
    const decisions = await decideAsks(hub, turn, asks);
    if (keptAtStop()) return { results: [], notes, leftOpen: true };
    for (const [call, outcome] of decisions) {
      if (outcome.decision === 'approved') {
        track(call, 'allowed');
        continue;
      }
      if (turn.controller.signal.aborted) continue;
      finish(call, { content: rejectionText(outcome), isError: true });
      track(call, 'denied');
    }
  }

  // Phase 3: run.
  const signal = turn.controller.signal;
  const runnable = calls.filter((c) => !c.result && c.tool);
  if (runnable.length > 0 && !signal.aborted) {
    hub.setStatus(slot, 'running-tool', runnable.map((c) => c.use.name).join(', '));
    turn.stage = 'running';
    await runScheduled(hub, runnable, signal, async (call) => {
      const context: ToolContext = hub.toolContext(turn, call.use.id);
      let result: ToolResult;
      try {
        result = await env.executeTool(call.tool!, call.input, context);
      } catch (error) {
        result = { content: `${call.use.name} failed: ${messageOf(error)}`, isError: true };
      }
      if (!signal.aborted) finish(call, result);
    });
  }

  if (keptAtStop()) return { results: [], notes, leftOpen: true };
  releaseChildren();

  const reason = interruptedText(hub);
  for (const call of calls) if (!call.result) finish(call, { content: reason, isError: true });
  const results: ToolResultBlock[] = calls.map((c) => ({
    type: 'tool_result',
    toolUseId: c.use.id,
    content: c.result!.content,
    ...(c.result!.isError ? { isError: true } : {}),
  }));
  return { results, notes };
}
