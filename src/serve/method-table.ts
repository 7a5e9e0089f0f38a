import { z } from 'zod';
import type { Core } from '../runtime/commands';
import type { HistoryService, WorkflowCommands } from '../runtime/core-api';
import { RESULT_SCHEMAS as R } from './results';
import { takeSnapshot } from './snapshot';

/**
 * One entry per protocol method (docs/serve.md#protocol): the server validates `params`,
 * dispatches with `serve`, and the client checks what comes back with `result`. The parser
 * (protocol.ts), the server's dispatch (server.ts) and the remote client's calls (caller.ts,
 * remote-core.ts) are all derived from this table: a new method is one entry here.
 */
export interface MethodEntry<P extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  /** The request's `params` (a strict object: unknown fields are `bad-params`). */
  readonly params: P;
  /** What a client accepts as the result; anything else is the server breaking the protocol. */
  readonly result: Res;
  /**
   * The server side: call the core (or a service beside it) with the params already validated. The value (or the
   * promise's) is sent as the result, `undefined` as null; a throw or rejection is a `failed`
   * error. A refusal such as `{ ok: false, error }` is a result, not a protocol error.
   */
  serve(served: Served, params: z.infer<P>): unknown;
}

/** What a server serves: the core and the named services beside it (src/runtime/core-api.ts). */
export interface Served {
  readonly core: Core;
  readonly history: HistoryService;
  readonly workflows: WorkflowCommands;
}

export type MethodTable = Readonly<Record<string, MethodEntry>>;

/** Types one entry (inference keeps each entry's own params and result types). */
const entry = <P extends z.ZodType, Res extends z.ZodType>(e: MethodEntry<P, Res>): MethodEntry<P, Res> => e;

const sessionId = z.string().min(1).max(400);
const participantId = z.string().min(1).max(200);
const runId = z.string().min(1).max(200);
/** Message text: as long as a client line may be (protocol.ts MAX_CLIENT_LINE_BYTES). */
const text = z.string().max(1024 * 1024);
const none = z.strictObject({});
const inSession = z.strictObject({ sessionId });

/** Every method of protocol version 1. The methods mirror `LegionCore` and the history and workflow services beside it (src/runtime/core-api.ts). */
export const METHOD_TABLE = {
  send: entry({
    params: z.strictObject({ responderId: participantId, text, name: z.string().max(200).optional() }),
    result: R.outcome,
    serve: ({ core }, p) => core.send(p.responderId, p.text, p.name),
  }),
  reply: entry({ params: z.strictObject({ sessionId, text }), result: R.outcome, serve: ({ core }, p) => core.reply(p.sessionId, p.text) }),
  openSession: entry({
    params: z.strictObject({ responderId: participantId, name: z.string().max(200).optional() }),
    result: R.outcome,
    serve: ({ core }, p) => core.openSession(p.responderId, p.name),
  }),
  resolveApprovals: entry({
    params: z.strictObject({
      requestIds: z.array(z.string().min(1).max(200)).min(1).max(1000),
      decision: z.enum(['approved', 'rejected']),
      reason: z.string().max(4000).optional(),
      allowForSession: z.boolean().optional(),
    }),
    result: R.outcome,
    serve: ({ core }, p) => core.resolveApprovals(p.requestIds, p.decision, {
      ...(p.reason !== undefined ? { reason: p.reason } : {}), ...(p.allowForSession !== undefined ? { allowForSession: p.allowForSession } : {}),
    }),
  }),
  cancel: entry({ params: inSession, result: R.none, serve: ({ core }, p) => { core.cancel(p.sessionId); return null; } }),
  idle: entry({ params: inSession, result: R.text, serve: ({ core }, p) => core.idle(p.sessionId) }),
  compact: entry({ params: inSession, result: R.outcome, serve: ({ core }, p) => core.compact(p.sessionId) }),
  participants: entry({ params: none, result: R.participants, serve: ({ core }) => core.participants() }),
  sessions: entry({ params: none, result: R.sessions, serve: ({ core }) => core.sessions() }),
  history: entry({ params: inSession, result: R.history, serve: ({ core }, p) => core.history(p.sessionId) }),
  contextRecords: entry({ params: inSession, result: R.contextRecords, serve: ({ core }, p) => core.contextRecords(p.sessionId) }),
  pendingApprovals: entry({ params: none, result: R.pendingApprovals, serve: ({ core }) => core.pendingApprovals() }),
  usage: entry({ params: none, result: R.usage, serve: ({ core }) => core.usage() }),
  /** Everything a front end shows at start (see `Snapshot`): composed of the reads above, in one step. */
  snapshot: entry({ params: none, result: R.snapshot, serve: ({ core }) => takeSnapshot(core) }),
  /** The run's last outcome of a user session (`legion run` reads how its turn ended). */
  lastOutcome: entry({ params: inSession, result: R.lastOutcome, serve: ({ core }, p) => core.lastOutcome(p.sessionId) ?? null }),
  // The history browser (docs/serve.md#history): every run of the workspace, read-only.
  runs: entry({ params: none, result: R.runs, serve: ({ history }) => history.runs() }),
  runSessions: entry({ params: z.strictObject({ runId }), result: R.runSessions, serve: ({ history }, p) => history.runSessions(p.runId) }),
  transcript: entry({ params: z.strictObject({ runId, sessionId }), result: R.transcript, serve: ({ history }, p) => history.transcript(p.runId, p.sessionId) }),
  search: entry({
    params: z.strictObject({ runId, query: z.string().max(1000) }), result: R.search, serve: ({ history }, p) => history.searchHistory(p.runId, p.query),
  }),
  // Workflows (docs/workflows.md#core-interface): list, start, cancel; progress arrives as `workflow-*` events.
  workflows: entry({ params: none, result: R.workflows, serve: ({ workflows }) => workflows.list() }),
  startWorkflow: entry({
    params: z.strictObject({
      name: z.string().min(1).max(64), input: text,
      inputs: z.record(z.string().min(1).max(64), z.string().max(64 * 1024)).refine((r) => Object.keys(r).length <= 64, 'at most 64 inputs').optional(),
    }),
    result: R.workflowStart,
    serve: ({ workflows }, p) => workflows.start(p.name, p.input, p.inputs ?? {}),
  }),
  cancelWorkflow: entry({
    params: z.strictObject({ workflowId: z.string().min(1).max(200) }), result: R.outcome,
    serve: ({ workflows }, p) => (workflows.cancel(p.workflowId) ? { ok: true } : { ok: false, error: `no running workflow ${p.workflowId}` }),
  }),
} as const satisfies MethodTable;

export type Method = keyof typeof METHOD_TABLE;
/** Params as a client sends them. */
export type ParamsOf<M extends Method> = z.input<(typeof METHOD_TABLE)[M]['params']>;
export type ResultOf<M extends Method> = z.infer<(typeof METHOD_TABLE)[M]['result']>;
export const METHODS = Object.keys(METHOD_TABLE) as Method[];
