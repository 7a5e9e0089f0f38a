import type { Summarize } from '../context/compact';
import type { ContextManager, Prepared } from '../context/manager';
import { isOverflowError, overflowTokensOf } from '../context/overflow';
import type { Provider } from '../providers/types';
import type { ToolCatalog } from '../tools/types';
import { messageOf } from '../errors';
import type { Journal } from './journal';
import type { ProviderChoice } from './ports';
import type { Agent } from '../collective/participant';
import type { SessionHandle } from '../session/types';
import { agentToolDefinitions, systemPromptOf, type PromptExtras, type StreamOnce, type StreamResult } from './stream';

export interface ContextStreamDeps {
  readonly context: ContextManager;
  /** The plain call (stream.ts). */
  readonly stream: StreamOnce;
  readonly tools: ToolCatalog;
  readonly workspaceRoot: string;
  /** The root a session's tools act in (its worktree when isolated, docs/worktrees.md); default the workspace. */
  readonly rootOf?: (sessionId: string) => string;
  /** The `usage` event of the summaries' calls (journal.ts). */
  readonly usage: Journal['usage'];
  readonly notice: Journal['notice'];
  readonly now: () => string;
  /** Spending limits, checked before each call (budget-gate.ts); a text ends the turn. */
  readonly budget?: (turn: Parameters<StreamOnce>[0]) => Promise<string | null>;
  /** Appended to every system prompt (docs/conventions.md). */
  readonly promptExtras?: PromptExtras;
}

const ABORTED: StreamResult = { text: '', toolUses: [], inputErrors: new Map(), aborted: true };

/**
 * The `stream` step of a turn with context management (src/context, docs/context.md): before
 * the call, what to send (compacting first when the request is too big); after a "prompt is
 * too long" error, a harder compaction and one retry.
 */
export function createContextStream(deps: ContextStreamDeps): StreamOnce {
  return async (turn, choice) => {
    const { session } = turn;
    const system = systemPromptOf(deps.rootOf?.(turn.session.id) ?? deps.workspaceRoot, turn, deps.promptExtras?.(turn.agent));
    const tools = agentToolDefinitions(deps.tools, turn.agent);
    const prepare = (force?: 'harder', measuredTokens?: number | null): Promise<Prepared> =>
      deps.context.prepare({
        session, participantId: turn.agent.id, system, tools, model: choice.model,
        summarize: summarizerFor(deps, turn.agent.id, session.id, choice), signal: turn.controller.signal,
        ...(force ? { force, measuredTokens: measuredTokens ?? null } : {}),
      });
    const send = (prepared: Extract<Prepared, { ok: true }>): Promise<StreamResult> =>
      deps.stream(turn, choice, {
        system, messages: prepared.messages, onPromptTokens: (tokens) => deps.context.reported(session.id, tokens, prepared.sentCount),
      });
    const stop = deps.budget ? await deps.budget(turn) : null;
    if (turn.controller.signal.aborted) return ABORTED;
    if (stop !== null) return { text: '', toolUses: [], inputErrors: new Map(), aborted: false, error: stop };
    let prepared = await prepare();
    if (!prepared.ok) return ABORTED;
    const result = await send(prepared);
    const overflow =
      result.error !== undefined && !result.text && result.toolUses.length === 0 &&
      isOverflowError({ message: result.error, ...(result.errorStatus !== undefined ? { status: result.errorStatus } : {}) });
    if (!overflow) return result;
    deps.notice('warn', `${turn.agent.id}: the request was too long for the model (${result.error}); compacting harder and retrying once`, session.id);
    prepared = await prepare('harder', overflowTokensOf(result.error!));
    if (!prepared.ok) return ABORTED;
    return send(prepared);
  };
}

/** Summary requests on the session's own provider and model, with no tools offered; their usage is billed like any call. */
export function summarizerFor(
  deps: Pick<ContextStreamDeps, 'usage' | 'notice' | 'now'>,
  participantId: string,
  sessionId: string,
  choice: { provider: Provider; model: string },
): Summarize {
  return async (request, signal) => {
    let text = '';
    try {
      const events = choice.provider.stream(
        {
          system: request.system,
          messages: [{ role: 'user', content: [{ type: 'text', text: request.text }], at: deps.now() }],
          tools: [],
          model: choice.model,
          maxTokens: request.maxTokens,
          meta: { participantId, sessionId, purpose: 'compaction' },
          onNotice: (level, message) => deps.notice(level, message, sessionId),
        },
        signal,
      );
      for await (const event of events) {
        if (event.type === 'text-delta') text += event.text;
        else if (event.type === 'usage') {
          deps.usage(sessionId, participantId, event);
        } else if (event.type === 'error') return { ok: false, error: event.message, aborted: signal.aborted };
      }
    } catch (error) {
      return { ok: false, error: messageOf(error), aborted: signal.aborted };
    }
    if (signal.aborted) return { ok: false, error: 'aborted', aborted: true };
    return { ok: true, text };
  };
}

export interface CompactNowDeps extends Omit<ContextStreamDeps, 'stream'> {
  session(sessionId: string): SessionHandle | undefined;
  agent(participantId: string): Agent | undefined;
  resolveProvider(agent: Agent): ProviderChoice;
  /** A turn runs or waits in the session (it compacts before its next call by itself). */
  isBusy(sessionId: string): boolean;
}

/**
 * Compact a session now, on the user's request (the TUI's compact key, docs/context.md):
 * eviction and a summary of the older part, whatever the estimate says. Refused while a turn
 * runs in the session. Failures are also notices in the session's lane.
 */
export function createCompactNow(deps: CompactNowDeps): (sessionId: string) => Promise<{ ok: true; text: string } | { ok: false; error: string }> {
  return async (sessionId) => {
    const fail = (error: string): { ok: false; error: string } => {
      deps.notice('warn', `compact: ${error}`, sessionId);
      return { ok: false, error };
    };
    const session = deps.session(sessionId);
    if (!session) return fail(`no session ${sessionId}`);
    if (deps.isBusy(sessionId)) return fail('a turn is running in this session; it compacts before its next model call when needed');
    const agent = deps.agent(session.key.responderId);
    if (!agent) return fail(`${session.key.responderId} is not an agent: nothing is sent to a model in this session`);
    const choice = deps.resolveProvider(agent);
    if (!choice.ok) return fail(choice.error);
    const before = session.contextRecords().length;
    const prepared = await deps.context.prepare({
      session, participantId: agent.id, system: systemPromptOf(deps.rootOf?.(session.id) ?? deps.workspaceRoot, { agent, session }, deps.promptExtras?.(agent)),
      tools: agentToolDefinitions(deps.tools, agent), model: choice.model,
      summarize: summarizerFor(deps, agent.id, sessionId, choice), signal: new AbortController().signal, force: 'now',
    });
    if (!prepared.ok) return fail('cancelled');
    if (session.contextRecords().length === before) return fail('nothing to compact yet (no older messages before the recent part)');
    return { ok: true, text: `compacted to ~${prepared.tokens} tokens` };
  };
}
