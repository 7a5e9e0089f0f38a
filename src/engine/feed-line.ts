import type { EventInput, EventType, LegionEvent } from '../events/types';
import { EVENT_TYPES } from '../events/types';
import { checkEventBody } from '../serve/event-schemas';
import type { FeedLine } from './event-feed';

/**
 * The hub's check of one line of a worker's feed (docs/engine.md#the-feed-checked-and-the-buss-stamp).
 * The feed is a trust boundary: whoever can register a deployment with the engine's admin API
 * points the hub at a feed it writes, and what the hub takes goes on its bus — to its front
 * ends, its ledger, its hooks and the run's usage totals (budgets). So a line is taken only
 * when it is exactly one of the shapes the worker writes (event-feed.ts `FeedLine`), an event
 * with the body its type has (serve/event-schemas.ts, the check a front end makes of what the
 * server pushes; a text delta checked field by field, as there); everything else is refused
 * with one line of why. The events a hub makes itself (`run-start`, `run-end`) are never taken
 * from a feed. A line of another run is passed over unchecked: it is not this hub's.
 */
export type FeedVerdict =
  | { readonly kind: 'line'; readonly line: FeedLine }
  | { readonly kind: 'other-run' }
  | { readonly kind: 'refused'; readonly why: string };

/** Event types a feed may carry: every type but the hub's own. */
const FEED_EVENT_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES.filter((t) => t !== 'run-start' && t !== 'run-end'));
/** Ids on the feed (a request's, an awakeable's, an invocation's, a session's, a turn's): short non-empty strings. */
const MAX_ID = 1000;
const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_ID;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The one key of a line besides `runId` (`event`, `awakeable`, `invocation`, `outcome`), or why not. */
function bodyKey(v: Record<string, unknown>): string | { why: string } {
  let key: string | undefined;
  for (const k in v) {
    if (k === 'runId') continue;
    if (key !== undefined) return { why: `more than one of event, awakeable, invocation, outcome (${key}, ${k.slice(0, 40)})` };
    key = k;
  }
  return key ?? { why: 'no event, awakeable, invocation or outcome' };
}

/** Check one line (without its newline) of a worker's feed for the hub of `runId`. Never throws. */
export function readFeedLine(text: string, runId: string): FeedVerdict {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'refused', why: 'not JSON' };
  }
  if (!isRecord(value)) return { kind: 'refused', why: 'not a JSON object' };
  if (typeof value.runId !== 'string') return { kind: 'refused', why: 'no runId' };
  if (value.runId !== runId) return { kind: 'other-run' };
  const key = bodyKey(value);
  if (typeof key !== 'string') return { kind: 'refused', why: key.why };
  const body = value[key];
  if (!isRecord(body)) return { kind: 'refused', why: `${key.slice(0, 40)} is not an object` };
  switch (key) {
    case 'event': {
      const type = body.type;
      if (typeof type !== 'string' || !FEED_EVENT_TYPES.has(type)) return { kind: 'refused', why: `an event of type ${JSON.stringify(String(type).slice(0, 40))}, which a worker does not send` };
      const checked = checkEventBody(body as unknown as LegionEvent);
      if (!checked.ok) return { kind: 'refused', why: checked.error };
      return { kind: 'line', line: { runId, event: checked.event as unknown as EventInput & { type: EventType } } };
    }
    case 'awakeable':
      if (!isId(body.requestId) || !isId(body.id)) return { kind: 'refused', why: 'an awakeable without its request id and id' };
      return { kind: 'line', line: { runId, awakeable: { requestId: body.requestId, id: body.id } } };
    case 'invocation':
      if (!isId(body.sessionId) || !isId(body.id)) return { kind: 'refused', why: 'an invocation without its session id and id' };
      return { kind: 'line', line: { runId, invocation: { sessionId: body.sessionId, id: body.id } } };
    case 'outcome':
      // The outcome itself is checked by the hub against the turn outcome's schema when a turn waits on it.
      if (!isId(body.turnId) || !isId(body.sessionId)) return { kind: 'refused', why: 'an outcome without its turn id and session id' };
      return { kind: 'line', line: { runId, outcome: { turnId: body.turnId, sessionId: body.sessionId, outcome: body.outcome as never } } };
    default:
      return { kind: 'refused', why: `an unknown line (${key.slice(0, 40)})` };
  }
}
