import type { Agent } from '../collective/participant';
import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from '../model/message';
import { textOf } from '../model/message';
import type { Batch } from './call-state';
import type { Journal } from './journal';
import type { HookTurn, ProviderChoice, TurnHooks } from './ports';
import type { StreamOnce } from './stream';
import type { ResumeCalls } from './resume-prepass';
import type { DecideAsks } from './approval-phase';
import type { Turn, TurnOutcome, TurnStart } from './turn';
import { answerOpenCalls } from './open-calls';
import { interruptedText } from './format';

/**
 * What one turn needs, built once by the core (core.ts). Each step is a function so a test
 * can drive a turn with a stub stream and a stub authorizer (test/unit/runtime/agent-loop.test.ts).
 */
export interface TurnDeps {
  readonly maxIterations: number;
  resolveProvider(agent: Agent): ProviderChoice;
  /** Call the model once (stream.ts). */
  readonly stream: StreamOnce;
  /** A new, empty batch for `turn`. */
  openBatch(turn: Turn): Batch;
  /** Phase 1, the pre-scan of a new message's calls (prescan.ts). */
  prescan(turn: Turn, batch: Batch, uses: readonly ToolUseBlock[], inputErrors: ReadonlyMap<string, string>): void | Promise<void>;
  /** Phase 1 of a batch resumed after a restart (resume-prepass.ts). */
  readonly resumeCalls: ResumeCalls;
  /** Phase 2, decide the asks (approval-phase.ts). */
  readonly decideAsks: DecideAsks;
  /** Phase 3, run the allowed calls (execute-phase.ts). */
  runCalls(turn: Turn, batch: Batch): Promise<void>;
  /** Answer what is left "interrupted"; one result per call (execute-phase.ts). */
  closeBatch(turn: Turn, batch: Batch): ToolResultBlock[];
  readonly append: Journal['append'];
  readonly now: Journal['now'];
  readonly setStatus: Journal['setStatus'];
  readonly notice: Journal['notice'];
  /** News of detached delegations, as notes for the agent (delegation.ts). */
  collectNews(turn: Turn, atEnd: boolean): Promise<string[]>;
  isStopping(): boolean;
  /** Legion is stopping and this turn's open batch stays on disk for the next start. */
  isLeftOpen(turn: Turn): boolean;
  /**
   * Awaited once a new message is on disk, before the first model call (the background
   * set-up, MCP servers still starting: docs/performance.md, docs/mcp.md). Settles when
   * `signal` aborts; never rejects.
   */
  beforeFirstCall?(signal: AbortSignal): Promise<void>;
  /** UserPromptSubmit, SessionStart, Stop and SubagentStop hooks (docs/conventions.md#hooks). */
  readonly hooks?: Pick<TurnHooks, 'promptSubmit' | 'stop'>;
}

const textBlocks = (notes: readonly string[]): ContentBlock[] => notes.map((text) => ({ type: 'text', text }));

/**
 * One turn of `turn.agent` in its session: append the initiator's message, then call the
 * model, run the tool calls of its message as one batch (pre-scan, approvals, execution),
 * append one message with every result, and repeat until a message has no tool calls or
 * `maxIterations` model calls were made. Never throws; the history is valid whatever happens
 * (every tool_use answered before the turn returns) — except that when Legion stops while the
 * user's lane waits on approvals, the calls are left open on purpose for the next start,
 * which starts the turn at its open batch (`start.kind === 'resume'`) instead of a new message.
 */
export async function runTurn(turn: Turn, start: TurnStart, deps: TurnDeps): Promise<TurnOutcome> {
  const { session, slot } = turn;
  const sessionId = session.id;
  const signal = turn.controller.signal;
  const agentId = turn.agent.id;
  const hookTurn: HookTurn = { sessionId, participantId: agentId, initiatorId: session.key.initiatorId, chain: turn.chain };
  let stopHookActive = false;

  const interrupted = (): TurnOutcome => {
    answerOpenCalls(deps, session, interruptedText(deps.isStopping()));
    deps.setStatus(slot, 'idle');
    if (!deps.isStopping()) deps.notice('info', `${agentId}: turn interrupted`, sessionId);
    return { kind: 'interrupted' };
  };

  /** The phases of one batch, then its results (with news of delegations) appended; an outcome ends the turn. */
  const runBatch = async (batch: Batch): Promise<TurnOutcome | undefined> => {
    let results: ToolResultBlock[] | undefined;
    try {
      const asks = batch.of('ask').length;
      if (asks > 0) {
        deps.setStatus(slot, 'waiting-approval', `${asks} approval${asks > 1 ? 's' : ''}`);
        turn.stage = 'approvals';
        await deps.decideAsks(turn, batch);
      }
      if (!deps.isLeftOpen(turn)) {
        const runnable = batch.of('run');
        if (runnable.length > 0 && !signal.aborted) {
          deps.setStatus(slot, 'running-tool', runnable.map((c) => c.use.name).join(', '));
          turn.stage = 'running';
          await deps.runCalls(turn, batch);
        }
        if (!deps.isLeftOpen(turn)) results = deps.closeBatch(turn, batch);
      }
    } finally {
      turn.stage = undefined;
    }
    if (!results) {
      // Legion is stopping while the user's approvals are pending: the calls stay open on disk.
      deps.setStatus(slot, 'idle');
      return { kind: 'interrupted' };
    }
    const own = batch.notes;
    const notes = signal.aborted ? own : [...own, ...(await deps.collectNews(turn, false))];
    deps.append(session, { role: 'user', content: [...results, ...textBlocks(notes)], at: deps.now() });
    return signal.aborted ? interrupted() : undefined;
  };

  let lastText = '';
  if (start.kind === 'resume') {
    lastText = textOf(start.point.message);
    const batch = deps.openBatch(turn);
    deps.resumeCalls(turn, batch, start.point);
    const ended = await runBatch(batch);
    if (ended) return ended;
  } else {
    answerOpenCalls(deps, session, interruptedText(deps.isStopping()));
    const firstInSession = session.messages().length === 0;
    deps.append(session, { role: 'user', content: [{ type: 'text', text: start.text }], at: deps.now() });
    if (signal.aborted) return interrupted();
    if (deps.beforeFirstCall) {
      deps.setStatus(slot, 'thinking');
      await deps.beforeFirstCall(signal);
      if (signal.aborted) return interrupted();
    }
    if (deps.hooks) {
      // The message is on disk already: a hook that fails or blocks never loses it.
      const submitted = await deps.hooks.promptSubmit(hookTurn, start.text, firstInSession, signal);
      if (signal.aborted) return interrupted();
      if (submitted.block !== undefined) {
        const why = `a UserPromptSubmit hook blocked the message: ${submitted.block}`;
        deps.setStatus(slot, 'idle');
        deps.notice('warn', `${agentId}: ${why}`, sessionId);
        return { kind: 'failed', error: why };
      }
      if (submitted.context.length > 0) deps.append(session, { role: 'user', content: textBlocks(submitted.context), at: deps.now() });
    }
  }

  const choice = deps.resolveProvider(turn.agent);
  if (!choice.ok) {
    deps.setStatus(slot, 'error', choice.error);
    deps.notice('error', `${agentId}: ${choice.error}`, sessionId);
    return { kind: 'failed', error: choice.error };
  }

  const max = deps.maxIterations;
  for (let iteration = 0; ; iteration++) {
    if (signal.aborted) return interrupted();
    if (iteration >= max) {
      const why = `${agentId} stopped after ${max} model calls without a final answer (runtime.maxIterations)`;
      deps.setStatus(slot, 'idle');
      deps.notice('warn', why, sessionId);
      return { kind: 'done', text: lastText, incomplete: why };
    }
    deps.setStatus(slot, 'thinking');
    const streamed = await deps.stream(turn, choice);
    if (streamed.aborted) {
      const content: ContentBlock[] = streamed.text ? [{ type: 'text', text: streamed.text }] : [];
      content.push(...streamed.toolUses);
      if (content.length > 0) deps.append(session, { role: 'assistant', content, at: deps.now() });
      return interrupted();
    }
    if (streamed.error !== undefined) {
      // Tool calls of a failed message are dropped: they were never authorized nor run.
      if (streamed.text) deps.append(session, { role: 'assistant', content: [{ type: 'text', text: streamed.text }], at: deps.now() });
      deps.setStatus(slot, 'error', streamed.error);
      deps.notice('error', `${agentId}: ${streamed.error}`, sessionId);
      return { kind: 'failed', error: streamed.error };
    }
    const content: ContentBlock[] = streamed.text ? [{ type: 'text', text: streamed.text }] : [];
    content.push(...streamed.toolUses);
    const message: Message = { role: 'assistant', content, at: deps.now() };
    deps.append(session, message);
    if (streamed.text) lastText = streamed.text;

    if (streamed.toolUses.length === 0) {
      const notes = await deps.collectNews(turn, true);
      if (signal.aborted) return interrupted();
      if (notes.length > 0) {
        deps.append(session, { role: 'user', content: textBlocks(notes), at: deps.now() });
        continue;
      }
      if (deps.hooks) {
        const goOn = await deps.hooks.stop(hookTurn, stopHookActive, signal);
        if (signal.aborted) return interrupted();
        if (goOn !== null) {
          stopHookActive = true;
          deps.append(session, { role: 'user', content: [{ type: 'text', text: `A stop hook asks you to continue: ${goOn}` }], at: deps.now() });
          continue;
        }
      }
      deps.setStatus(slot, 'idle');
      return { kind: 'done', text: streamed.text };
    }

    const batch = deps.openBatch(turn);
    await deps.prescan(turn, batch, streamed.toolUses, streamed.inputErrors);
    const ended = await runBatch(batch);
    if (ended) return ended;
  }
}
