import type { Core } from '../runtime/commands';
import type { Method, ParamsOf } from './protocol';
import { takeSnapshot } from './snapshot';

type Handler<M extends Method> = (params: ParamsOf<M>) => unknown;

/**
 * The server side of every protocol method: each calls the core (src/runtime/core-api.ts)
 * with the parameters the protocol already validated. A result is sent as it is (a refusal
 * such as `{ ok: false, error }` is a result, not a protocol error).
 */
export function createMethods(core: Core): { [M in Method]: Handler<M> } {
  const missing = (what: string): never => {
    throw new Error(`this server has no ${what}`);
  };
  return {
    send: (p) => core.send(p.responderId, p.text, p.name),
    reply: (p) => core.reply(p.sessionId, p.text),
    openSession: (p) => core.openSession(p.responderId, p.name),
    resolveApprovals: (p) => core.resolveApprovals(p.requestIds, p.decision, {
      ...(p.reason !== undefined ? { reason: p.reason } : {}), ...(p.allowForSession !== undefined ? { allowForSession: p.allowForSession } : {}),
    }),
    cancel: (p) => { core.cancel(p.sessionId); return null; },
    idle: (p) => core.idle(p.sessionId),
    compact: (p) => core.compact(p.sessionId),
    participants: () => core.participants(),
    sessions: () => core.sessions(),
    history: (p) => core.history(p.sessionId),
    contextRecords: (p) => core.contextRecords(p.sessionId),
    pendingApprovals: () => core.pendingApprovals(),
    usage: () => core.usage(),
    snapshot: () => takeSnapshot(core),
    lastOutcome: (p) => core.lastOutcome(p.sessionId) ?? null,
    runs: () => (core.runs ? core.runs() : missing('run history')),
    runSessions: (p) => (core.runSessions ? core.runSessions(p.runId) : missing('run history')),
    transcript: (p) => (core.transcript ? core.transcript(p.runId, p.sessionId) : missing('run history')),
    search: (p) => (core.searchHistory ? core.searchHistory(p.runId, p.query) : missing('run history')),
    workflows: () => (core.workflows ? core.workflows() : missing('workflows')),
    startWorkflow: (p) => (core.startWorkflow ? core.startWorkflow(p.name, p.input, p.inputs ?? {}) : { ok: false, error: 'this server has no workflows' }),
    cancelWorkflow: (p) => (core.cancelWorkflow?.(p.workflowId) ? { ok: true } : { ok: false, error: `no running workflow ${p.workflowId}` }),
  };
}
