import { z } from 'zod';
import { EVENT_TYPES, type LegionEvent } from '../events/types';
import { checkEventBody } from './event-schemas';
import { METHOD_TABLE, type MethodTable } from './method-table';

/**
 * The wire contract of `legion serve` (docs/serve.md): JSON lines over a Unix socket.
 *
 *   client → server  `{ "hello": { "protocol": 1, "since"?: seq } }` first, then requests
 *                    `{ "id", "method", "params"? }`
 *   server → client  `{ "welcome": {...} }` (answers hello), `{ "id", "result" }` or
 *                    `{ "id", "error": { kind, message } }`, pushed `{ "event" }`, a line-level
 *                    `{ "error": { kind, message } }` (bad JSON, oversize), `{ "bye": { reason } }`.
 *
 * Every line is parsed with these schemas on the side that receives it; anything that does not
 * parse is answered with an error (server) or dropped with a notice (client), never thrown.
 */
export const PROTOCOL_VERSION = 1;

/** A line a client sends is cut off past this many bytes (answered `oversize`, then skipped). */
export const MAX_CLIENT_LINE_BYTES = 1024 * 1024;
/** A line the server sends (a snapshot with every history) may be larger; the client caps it here. */
export const MAX_SERVER_LINE_BYTES = 256 * 1024 * 1024;

export type ErrorKind = 'bad-json' | 'oversize' | 'bad-request' | 'unknown-method' | 'bad-params' | 'protocol' | 'refused' | 'failed' | 'closed';
export interface WireError {
  readonly kind: ErrorKind;
  readonly message: string;
}

const requestId = z.union([z.number().int().nonnegative(), z.string().min(1).max(64)]);

export const helloSchema = z.strictObject({
  hello: z.strictObject({
    protocol: z.number().int(),
    /** The last event seq the client has seen: events after it are replayed (or a snapshot sent). */
    since: z.number().int().nonnegative().optional(),
    /** A label for the server's log ("tui", "run", "web"…). */
    client: z.string().max(64).optional(),
  }),
});
export type Hello = z.infer<typeof helloSchema>['hello'];

export { METHODS, type Method, type ParamsOf } from './method-table';

export const requestSchema = z.strictObject({ id: requestId, method: z.string().min(1).max(64), params: z.unknown().optional() });

export type ClientMessage =
  | { kind: 'hello'; hello: Hello }
  | { kind: 'request'; id: number | string; /** A method of the table the line was parsed with. */ method: string; params: unknown };

export type ClientParse = { ok: true; message: ClientMessage } | { ok: false; id?: number | string; error: WireError };

/**
 * Parse one line a client sent (without its newline). Never throws: bad JSON, a wrong shape,
 * an unknown method or bad parameters come back as an error (with the request id when one
 * could be read, so the reply can name it). Methods and their params come from `table`
 * (method-table.ts).
 */
export function parseClientLine(line: string, table: MethodTable = METHOD_TABLE): ClientParse {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, error: { kind: 'bad-json', message: 'not a JSON line' } };
  }
  if (typeof value === 'object' && value !== null && 'hello' in value) {
    const hello = helloSchema.safeParse(value);
    if (!hello.success) return { ok: false, error: { kind: 'bad-request', message: `bad hello: ${issueOf(hello.error)}` } };
    return { ok: true, message: { kind: 'hello', hello: hello.data.hello } };
  }
  const request = requestSchema.safeParse(value);
  if (!request.success) {
    const id = requestId.safeParse((value as { id?: unknown } | null)?.id);
    return { ok: false, ...(id.success ? { id: id.data } : {}), error: { kind: 'bad-request', message: `not a request: ${issueOf(request.error)}` } };
  }
  const { id, method } = request.data;
  const entry = Object.hasOwn(table, method) ? table[method] : undefined;
  if (!entry) return { ok: false, id, error: { kind: 'unknown-method', message: `unknown method "${method.slice(0, 64)}"` } };
  const params = entry.params.safeParse(request.data.params ?? {});
  if (!params.success) return { ok: false, id, error: { kind: 'bad-params', message: `${method}: ${issueOf(params.error)}` } };
  return { ok: true, message: { kind: 'request', id, method, params: params.data } };
}

function issueOf(error: z.ZodError): string {
  const first = error.issues[0];
  return first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'invalid';
}

// ---- server → client ----

const wireErrorSchema = z.object({ kind: z.string().max(64), message: z.string().max(100_000) });

/** An event as pushed: the envelope and a known type; the body is then checked by its type (event-schemas.ts, docs/design.md#events). */
export const wireEventSchema = z.looseObject({
  seq: z.number().int().positive(),
  at: z.string(),
  runId: z.string().min(1),
  type: z.enum(EVENT_TYPES as [LegionEvent['type'], ...LegionEvent['type'][]]),
});

export const welcomeSchema = z.strictObject({
  protocol: z.literal(PROTOCOL_VERSION),
  runId: z.string().min(1),
  workspace: z.string(),
  pid: z.number().int(),
  /** Random per server start: a client coming back to another instance (a restarted server) rebuilds from its snapshot. */
  instance: z.string().max(100).optional(),
  version: z.string(),
  /** The last event seq at the moment of the welcome: events after it follow. */
  lastSeq: z.number().int().nonnegative(),
  /** `since`: the events after the client's `since` follow; `snapshot`: it should fetch one (too far behind, or no `since`). */
  replay: z.enum(['since', 'snapshot']),
  /** For the status bar: "anthropic · claude-sonnet-4-5", "demo"… */
  providerLabel: z.string().max(200).optional(),
  demo: z.boolean().optional(),
  /** The server's untrusted-workspace warning (docs/workspace-trust.md), shown by attached front ends as a local start shows it. */
  untrusted: z.string().max(4000).optional(),
});
export type Welcome = z.infer<typeof welcomeSchema>;

export const serverLineSchema = z.union([
  z.strictObject({ welcome: welcomeSchema }),
  z.strictObject({ id: requestId, result: z.unknown() }),
  z.strictObject({ id: requestId, error: wireErrorSchema }),
  z.strictObject({ event: wireEventSchema }),
  z.strictObject({ error: wireErrorSchema }),
  z.strictObject({ bye: z.strictObject({ reason: z.string().max(10_000) }) }),
]);

export type ServerMessage =
  | { kind: 'welcome'; welcome: Welcome }
  | { kind: 'result'; id: number | string; result: unknown }
  | { kind: 'error'; id?: number | string; error: WireError }
  | { kind: 'event'; event: LegionEvent }
  | { kind: 'bye'; reason: string };

const EVENT_TYPE_SET: ReadonlySet<string> = new Set(EVENT_TYPES);

/**
 * The fast check of a pushed event line (most lines are): accepts exactly what `serverLineSchema`
 * accepts for `{ event }` — one key, the envelope and a known type — without zod's union;
 * anything else goes to zod for the verdict.
 */
function plainEventLine(value: unknown): LegionEvent | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  const event = v.event as Record<string, unknown> | undefined;
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return null;
  for (const key in v) if (key !== 'event') return null;
  const seq = event.seq;
  if (typeof seq !== 'number' || !Number.isInteger(seq) || seq <= 0) return null;
  if (typeof event.at !== 'string' || typeof event.runId !== 'string' || event.runId === '') return null;
  return typeof event.type === 'string' && EVENT_TYPE_SET.has(event.type) ? (event as unknown as LegionEvent) : null;
}

/** Parse one line the server sent. Never throws. */
export function parseServerLine(line: string): { ok: true; message: ServerMessage } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, error: 'the server sent a line that is not JSON' };
  }
  const plain = plainEventLine(value);
  if (plain) return eventMessage(plain);
  const parsed = serverLineSchema.safeParse(value);
  if (!parsed.success) return { ok: false, error: `the server sent a bad line: ${issueOf(parsed.error)}` };
  const v = parsed.data as Record<string, unknown>;
  if ('welcome' in v) return { ok: true, message: { kind: 'welcome', welcome: v.welcome as Welcome } };
  if ('event' in v) return eventMessage(v.event as LegionEvent);
  if ('bye' in v) return { ok: true, message: { kind: 'bye', reason: (v.bye as { reason: string }).reason } };
  if ('result' in v) return { ok: true, message: { kind: 'result', id: v.id as number | string, result: v.result } };
  const error = v.error as WireError;
  return { ok: true, message: { kind: 'error', ...(v.id !== undefined ? { id: v.id as number | string } : {}), error } };
}

/** An event whose envelope parsed: its body is checked too (event-schemas.ts) before a front end sees it. */
function eventMessage(event: LegionEvent): { ok: true; message: ServerMessage } | { ok: false; error: string } {
  const body = checkEventBody(event);
  return body.ok ? { ok: true, message: { kind: 'event', event: body.event } } : { ok: false, error: `the server sent a bad line: ${body.error}` };
}

/** One JSON line (with its newline). */
export const line = (value: unknown): string => JSON.stringify(value) + '\n';
