import type { LegionEvent, NoticeLevel } from '../../src/events/types';
import type { Message } from '../../src/model/message';
import type { CompactionEntry, SessionView, ToolLive, UiState } from './ui-state';
import { awaitsUser, newSessionView } from './ui-state';
import { parseSessionId, placeLane, presentQuestion } from './lanes';
import { addWorkflowUsage, reduceWorkflow } from './workflows';
import { decidedByText } from '../../src/remote/event-text';
import { isIsolationNote } from '../../src/runtime/core-api';

/**
 * The one place where events become UI state. Pure: the same event list always gives the
 * same state, so any run's ledger can be replayed into the UI (`events.reduce(reduce, s0)`).
 * Streaming deltas only touch their session's `streaming` text, keeping a delta O(1)-ish.
 */
export function reduce(state: UiState, event: LegionEvent): UiState {
  switch (event.type) {
    case 'run-start':
      return { ...state, resumed: event.resumed, ended: null };
    case 'run-end':
      return { ...state, ended: event.reason };
    case 'session-open': {
      if (state.sessions[event.sessionId]) return state;
      const session = newSessionView(event.sessionId, event.initiatorId, event.responderId, event.name, event.at);
      const next = { ...state, sessions: { ...state.sessions, [session.id]: session }, order: [...state.order, session.id] };
      if (!state.settings.autoOpenLanes && state.lanes.length > 0) return next;
      return placeLane(next, session.id, { focus: false, force: false });
    }
    case 'message-add':
      return update(state, event.sessionId, event.at, (s) => addMessage(s, event.message));
    case 'text-delta':
      return update(state, event.sessionId, event.at, (s) => ({ ...s, streaming: s.streaming + event.text }));
    case 'tool-call-start':
      return update(state, event.sessionId, event.at, (s) =>
        setTool(s, event.toolUseId, { name: event.name, input: event.input, state: 'running', ...sandboxedOf(event) }));
    case 'tool-call-end':
      return update(state, event.sessionId, event.at, (s) => setTool(s, event.toolUseId, {
        name: event.name, input: s.tools[event.toolUseId]?.input, state: event.isError ? 'error' : 'ok', summary: event.summary,
        ...sandboxedOf(s.tools[event.toolUseId] ?? {}),
      }));
    case 'approval-request': {
      const { type: _t, seq: _s, runId: _r, ...request } = event;
      const next = { ...state, pending: { ...state.pending, [event.requestId]: { ...request, chain: [...event.chain] } } };
      return update(next, event.sessionId, event.at, (s) => {
        const tool = s.tools[event.toolUseId];
        return setTool(s, event.toolUseId, tool ? { ...tool, state: 'waiting-approval', ...sandboxedOf(event) } : { name: event.toolName, input: event.input, state: 'waiting-approval', ...sandboxedOf(event) });
      });
    }
    case 'approval-resolve': {
      const request = state.pending[event.requestId];
      if (!request) return state;
      const { [event.requestId]: _gone, ...pending } = state.pending;
      // Decided on the web page or in Telegram: the terminal says so (docs/remote.md), as they say "in the terminal".
      const next = event.decidedBy.startsWith('remote:')
        ? { ...state, pending, notice: joinNotice(state.notice, 'info', `${event.requestId} ${event.decision} ${decidedByText(event.decidedBy)}`) }
        : { ...state, pending };
      return update(next, request.sessionId, event.at, (s) => {
        const tool = s.tools[request.toolUseId];
        if (!tool || tool.state !== 'waiting-approval') return s;
        if (event.decision === 'approved') return setTool(s, request.toolUseId, { ...tool, state: 'pending' });
        const why = `rejected by ${event.decidedBy}${event.reason ? `: ${event.reason}` : ''}`;
        return setTool(s, request.toolUseId, { ...tool, state: 'error', summary: why });
      });
    }
    case 'agent-status': {
      const before = state.sessions[event.sessionId];
      const next = update(state, event.sessionId, event.at, (s) => ({
        // A turn that ends without a persisted message (cancel, error) drops its partial text.
        ...(event.status === 'idle' || event.status === 'error' ? endStream(s) : s),
        status: event.status, detail: event.detail,
      }));
      const after = next.sessions[event.sessionId];
      // An agent asks the user: its lane opens (whatever `autoOpenLanes` says) and takes the focus when free.
      return after && awaitsUser(after) && !(before && awaitsUser(before)) ? presentQuestion(next, after.id) : next;
    }
    case 'usage': {
      const tokens = event.inputTokens + event.outputTokens + event.cacheReadTokens + event.cacheWriteTokens;
      const cost = event.costUsd ?? 0;
      const known = event.costUsd !== null;
      const next = {
        ...state,
        model: event.model,
        totals: { tokens: state.totals.tokens + tokens, costUsd: state.totals.costUsd + cost, costKnown: state.totals.costKnown && known },
      };
      return update(addWorkflowUsage(next, event.sessionId, event.costUsd), event.sessionId, event.at, (s) => ({
        ...s, tokens: s.tokens + tokens, costUsd: s.costUsd + cost, costKnown: s.costKnown && known,
      }));
    }
    case 'context-size':
      return update(state, event.sessionId, event.at, (s) => ({ ...s, context: { tokens: event.tokens, window: event.window } }));
    case 'compaction':
      return update(state, event.sessionId, event.at, (s) => {
        const context = s.context ? { ...s.context, tokens: event.tokensAfter } : undefined;
        if (event.kind !== 'summary') return { ...s, ...(context ? { context } : {}) };
        const entry: CompactionEntry = {
          role: 'compaction', summarized: event.firstKept - (s.summarizedUpTo ?? 0), tokensBefore: event.tokensBefore,
          tokensAfter: event.tokensAfter, summary: event.summary ?? '', at: event.at,
        };
        return { ...s, entries: [...s.entries, entry], summarizedUpTo: event.firstKept, ...(context ? { context } : {}) };
      });
    case 'participant-change':
      return state; // the store refreshes the participant list from the core
    case 'checkpoint':
      return state; // the checkpoint list is read from the core when the lane opens it (docs/undo.md)
    case 'notice':
      if (event.sessionId && state.sessions[event.sessionId]) {
        return update(state, event.sessionId, event.at, (s) => ({
          ...s, entries: [...s.entries, { role: 'notice', level: event.level, text: event.message, at: event.at }],
        }));
      }
      return { ...state, notice: joinNotice(state.notice, event.level, event.message) };
    case 'mcp-status':
      return { ...state, mcp: { ...state.mcp, [event.server]: event.error === undefined ? { state: event.state } : { state: event.state, error: event.error } } };
    case 'tool-progress':
      return update(state, event.sessionId, event.at, (s) => {
        const tool = s.tools[event.toolUseId];
        if (!tool || tool.state !== 'running') return s;
        return setTool(s, event.toolUseId, { ...tool, progress: progressText(event.progress, event.total, event.message) });
      });
    case 'workflow-start':
    case 'workflow-step-start':
    case 'workflow-step-end':
    case 'workflow-end':
      return reduceWorkflow(state, event);
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}

/** Apply `change` to a session, creating it from its id when an event precedes `session-open`. */
function update(state: UiState, sessionId: string, at: string, change: (s: SessionView) => SessionView): UiState {
  let session = state.sessions[sessionId];
  let order = state.order;
  if (!session) {
    const key = parseSessionId(sessionId);
    if (!key) return state;
    session = newSessionView(sessionId, key.initiatorId, key.responderId, key.name, at);
    order = [...order, sessionId];
  }
  const next = change(session);
  if (next === session && order === state.order) return state;
  return { ...state, order, sessions: { ...state.sessions, [sessionId]: { ...next, lastActivity: at > next.lastActivity ? at : next.lastActivity } } };
}

/** Append a persisted message. The responder's message replaces the text streamed for it. */
export function addMessage(session: SessionView, message: Message): SessionView {
  let tools = session.tools;
  for (const block of message.content) {
    if (block.type === 'tool_use' && !tools[block.id]) tools = { ...tools, [block.id]: { name: block.name, input: block.input, state: 'pending' } };
    if (block.type === 'tool_result') {
      const live = tools[block.toolUseId];
      if (live && live.state !== 'ok' && live.state !== 'error') {
        const summary = live.summary ?? (block.isError ? block.content.split('\n', 1)[0] : undefined);
        tools = { ...tools, [block.toolUseId]: { ...live, state: block.isError ? 'error' : 'ok', summary } };
      }
    }
  }
  const isolated = session.isolated === true || (message.role === 'user' && message.content.some((b) => b.type === 'text' && isIsolationNote(b.text)));
  return {
    ...(message.role === 'assistant' ? endStream(session) : session),
    entries: [...session.entries, message],
    tools,
    ...(isolated ? { isolated } : {}),
  };
}

/** The streamed text is over (persisted or dropped): the next stream is a new epoch. */
function endStream(session: SessionView): SessionView {
  return session.streaming === '' ? session : { ...session, streaming: '', streamEpoch: session.streamEpoch + 1 };
}

/** The `sandboxed` flag when the source has one (only tools that start processes do). */
function sandboxedOf(source: { readonly sandboxed?: boolean }): { sandboxed?: boolean } {
  return source.sandboxed === undefined ? {} : { sandboxed: source.sandboxed };
}

function setTool(session: SessionView, id: string, tool: ToolLive): SessionView {
  return { ...session, tools: { ...session.tools, [id]: tool } };
}

/** "3/5", "40%" (a total of 1 reads as a fraction), else the bare count; a message follows. */
export function progressText(progress: number, total: number | undefined, message: string | undefined): string {
  let text: string;
  if (total === undefined) text = String(progress);
  else if (total === 1 || total === 100) text = `${Math.round((progress / total) * 100)}%`;
  else text = `${progress}/${total}`;
  return message ? `${text} ${message.split('\n')[0]!.slice(0, 60)}` : text;
}

const SEVERITY = { info: 0, warn: 1, error: 2 } as const;
/** Longest status-line notice kept; older parts are dropped first. */
const MAX_NOTICE_CHARS = 1_000;

/**
 * The status line's notice after another one: notices that arrive before the next key (which
 * clears the line) are joined, oldest first, at the most severe level, so a notice that comes a
 * moment after start-up (the sandbox probe's, docs/sandbox.md) does not hide the start's.
 */
function joinNotice(shown: UiState['notice'], level: NoticeLevel, text: string): UiState['notice'] {
  if (!shown || shown.text === text) return { level, text };
  let joined = `${shown.text} · ${text}`;
  if (joined.length > MAX_NOTICE_CHARS) joined = `…${joined.slice(joined.length - MAX_NOTICE_CHARS + 1)}`;
  return { level: SEVERITY[level] >= SEVERITY[shown.level] ? level : shown.level, text: joined };
}
