import type { EventInput } from '../events/types';
import type { Message } from '../model/message';
import { compact, viewTokens, type ContextSettings, type Summarize } from './compact';
import { ContextMeter, fixedTokensOf } from './estimate';
import { stateOf, type ContextRecord, type ContextState } from './records';
import { requestView } from './view';

/** What the context manager needs of a session (a `SessionHandle` has it). */
export interface ContextSession {
  readonly id: string;
  readonly key: { readonly initiatorId: string; readonly responderId: string; readonly name: string };
  messages(): readonly Message[];
  contextRecords(): readonly ContextRecord[];
  appendContext(record: ContextRecord): void;
}

export interface PrepareRequest {
  readonly session: ContextSession;
  readonly participantId: string;
  readonly system: string;
  /** The tool definitions offered (counted in the request's size). */
  readonly tools: readonly unknown[];
  readonly model: string;
  /** Summary requests (no tools) go to the session's own model. */
  readonly summarize: Summarize;
  readonly signal: AbortSignal;
  /** Compact whatever the estimate says: after a "prompt is too long" error, or on the user's request. */
  readonly force?: 'harder' | 'now';
  /** With `harder`: the request size the provider reported in its error, when it said. */
  readonly measuredTokens?: number | null;
}

export type Prepared =
  | { ok: true; messages: Message[]; tokens: number; window: number; sentCount: number }
  | { ok: false; aborted: true };

/** Whether a session's next request needs compacting, and its estimated size. */
export interface Decision {
  readonly tokens: number;
  readonly window: number;
  readonly fixedTokens: number;
  readonly compact: boolean;
}

export interface ContextManager {
  /**
   * The decision `prepare` starts with: O(messages appended since the last call), plus one
   * pass over the request the first time a session is seen (after a restart or a compaction).
   */
  decide(request: Pick<PrepareRequest, 'session' | 'system' | 'tools' | 'model'>): Decision;
  /**
   * Before each provider call: estimate the request (O(messages appended since the last
   * call)), compact when it passes `compactAt` of the window (or when forced), and return
   * what to send. Compaction failures are notices; the call goes on with what there is.
   */
  prepare(request: PrepareRequest): Promise<Prepared>;
  /** The provider reported `promptTokens` for the request `prepare` returned with `sentCount`. */
  reported(sessionId: string, promptTokens: number, sentCount: number): void;
  /** The session's context state (summary, firstKept), e.g. for the transcript's marks. */
  stateOf(session: ContextSession): ContextState;
  windowOf(model: string): number;
}

export interface ContextManagerOptions {
  readonly settings: ContextSettings & { readonly defaultWindow: number };
  /** The model's window from models.yaml, null when not listed. */
  readonly windowOf: (model: string) => number | null;
  readonly emit: (event: EventInput) => void;
  readonly notice: (level: 'info' | 'warn' | 'error', message: string, sessionId: string) => void;
  readonly now: () => string;
}

interface Entry {
  readonly meter: ContextMeter;
  state: ContextState;
  /** Records folded into `state` so far. */
  seen: number;
}

/** One per core: per-session meters and context states (docs/context.md). */
export function createContextManager(options: ContextManagerOptions): ContextManager {
  const entries = new Map<string, Entry>();
  const { settings } = options;

  const entryOf = (session: ContextSession): Entry => {
    let entry = entries.get(session.id);
    const records = session.contextRecords();
    if (!entry) {
      entry = { meter: new ContextMeter(), state: stateOf(records, session.messages().length), seen: records.length };
      entries.set(session.id, entry);
    } else if (entry.seen !== records.length) {
      entry.state = stateOf(records, session.messages().length);
      entry.seen = records.length;
      entry.meter.invalidate();
    }
    return entry;
  };
  const windowOf = (model: string): number => options.windowOf(model) ?? settings.defaultWindow;

  const decide = (request: Pick<PrepareRequest, 'session' | 'system' | 'tools' | 'model'>): Decision => {
    const entry = entryOf(request.session);
    const messages = request.session.messages();
    const window = windowOf(request.model);
    const fixedTokens = fixedTokensOf(request.system, request.tools);
    if (!entry.meter.ready) entry.meter.rebase(viewTokens(messages, entry.state, settings, fixedTokens), messages.length);
    const tokens = entry.meter.estimate(messages);
    return { tokens, window, fixedTokens, compact: tokens >= settings.compactAt * window };
  };

  return {
    windowOf,
    decide,
    stateOf: (session) => entryOf(session).state,
    reported(sessionId, promptTokens, sentCount) {
      const entry = entries.get(sessionId);
      if (entry && promptTokens > 0) entry.meter.report(promptTokens, sentCount);
    },
    async prepare(request) {
      const { session } = request;
      const decision = decide(request);
      const entry = entryOf(session);
      const messages = session.messages();
      const { window, fixedTokens } = decision;
      let tokens = decision.tokens;
      if (request.force || decision.compact) {
        // The provider refused the request as too long: it counts more tokens than the estimate
        // does (a script the ratio does not fit, say). Budgets shrink by that factor.
        let effectiveWindow = window;
        if (request.force === 'harder') {
          const measured = request.measuredTokens ?? Math.ceil(window * 1.1);
          const estimated = viewTokens(messages, entry.state, settings, fixedTokens);
          if (measured > estimated) effectiveWindow = Math.max(1, Math.floor((window * estimated) / measured));
          tokens = Math.max(tokens, estimated);
        }
        const outcome = await compact({
          messages, state: entry.state, window: effectiveWindow, settings, fixedTokens, tokensBefore: tokens,
          harder: request.force === 'harder',
          always: request.force === 'now',
          who: { initiator: session.key.initiatorId, responder: session.key.responderId, session: session.key.name },
          now: options.now,
          commit: (record) => {
            session.appendContext(record);
            entry.seen++;
            options.emit({
              type: 'compaction', sessionId: session.id, participantId: request.participantId,
              kind: record.type === 'compaction' ? 'summary' : 'eviction',
              firstKept: record.type === 'compaction' ? record.firstKept : record.before,
              tokensBefore: record.tokensBefore, tokensAfter: record.tokensAfter,
              ...(record.type === 'compaction' ? { summary: record.summary } : {}),
            });
          },
          summarize: request.summarize,
          signal: request.signal,
        });
        entry.state = outcome.state;
        entry.meter.rebase(outcome.tokensAfter, messages.length);
        tokens = outcome.tokensAfter;
        if (outcome.kind === 'failed') {
          if (outcome.aborted || request.signal.aborted) return { ok: false, aborted: true };
          options.notice('warn', `${request.participantId}: could not summarize the older history (${outcome.error}); sending it as it is`, session.id);
        }
      }
      options.emit({ type: 'context-size', sessionId: session.id, participantId: request.participantId, tokens, window });
      return { ok: true, messages: requestView(messages, entry.state, settings.evictToolResultsOver), tokens, window, sentCount: messages.length };
    },
  };
}
