import type { ServerHttp2Stream, IncomingHttpHeaders } from 'node:http2';
import type { EventInput, LegionEvent } from '../events/types';
import type { TurnOutcome } from '../runtime/turn';

/** The path on a worker's endpoint where hubs follow its events (docs/engine.md#streaming-and-the-hub). */
export const EVENTS_PATH = '/legion/events';

/**
 * How long a text delta may wait on the feed for others to go out in the same write
 * (docs/engine.md#performance): with many sessions streaming, one HTTP/2 frame carries the
 * deltas of this window instead of one frame each. The window starts at the first delta
 * waiting (later ones do not extend it), so no delta waits longer. Any other line goes out at
 * the end of the event loop's turn it was published in (`setImmediate`), with the lines
 * published before it and in the same turn, in order: the events a step's end raises together
 * (its message, usage, statuses, the next tool's start) leave in one write instead of one each.
 * 16 ms: the provider's reads are gathered per 16 ms too (src/providers/http-watch.ts).
 */
export const FEED_BATCH_MS = 16;

/**
 * One line of the feed: an event of a run without its stamp, the awakeable a request for the
 * user waits on (the hub resolves it when a front end decides; docs/engine.md#approvals), the
 * invocation running a session's turn, or the outcome of a turn the hub sent (`turnId`: its
 * `x-legion-turn` header), published once every step of the turn is in the journal.
 */
export type FeedLine =
  | { readonly runId: string; readonly event: EventInput }
  | { readonly runId: string; readonly awakeable: { readonly requestId: string; readonly id: string } }
  | { readonly runId: string; readonly invocation: { readonly sessionId: string; readonly id: string } }
  | { readonly runId: string; readonly outcome: { readonly turnId: string; readonly sessionId: string; readonly outcome: TurnOutcome } };

/** A line as the feed writes it: its JSON and a newline. */
const lineOf = (line: FeedLine): string => JSON.stringify(line) + '\n';

/**
 * Events of the turns running on this worker, fanned out live to the hubs that follow them.
 * A hub that is not connected misses them (the projection on disk is the record; deltas are
 * not durable by design), except the requests still waiting for a decision: each
 * `approval-request` and its awakeable line are kept until its `approval-resolve` (or the end
 * of its session's turn) and written first to every hub that starts following, so a
 * `legion serve` restarted, or one that finds this worker late, still shows and decides them
 * (a hub takes a request it already holds once). A turn's own `run-start`/`run-end` (each
 * turn builds its core) are not the run's and are not published.
 */
export class EventFeed {
  private readonly listeners = new Set<(text: string) => void>();
  /** The lines of requests still waiting, by request id: its request line, then its awakeable's. */
  private readonly waitingRequests = new Map<string, { sessionId: string | undefined; lines: string[] }>();
  /** Lines not written yet (text deltas waiting for their window). */
  private waiting = '';
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** A write at the end of this turn of the event loop (a line that does not wait for the window). */
  private immediate: ReturnType<typeof setImmediate> | null = null;

  constructor(private readonly batchMs = FEED_BATCH_MS) {}

  publish(event: LegionEvent): void {
    if (event.type === 'approval-resolve') this.waitingRequests.delete(event.requestId);
    const live = this.listeners.size > 0 && event.type !== 'run-start' && event.type !== 'run-end';
    const kept = event.type === 'approval-request';
    if (!live && !kept) return;
    const { seq: _seq, at: _at, runId, ...input } = event;
    // One JSON text for the line: written live and, for a request, kept for hubs that follow later.
    const text = lineOf({ runId, event: input });
    if (kept) this.waitingRequests.set(event.requestId, { sessionId: event.sessionId, lines: [text] });
    if (live) this.write(text, event.type === 'text-delta');
  }

  publishAwakeable(runId: string, requestId: string, id: string): void {
    const text = lineOf({ runId, awakeable: { requestId, id } });
    this.waitingRequests.get(requestId)?.lines.push(text);
    this.write(text);
  }

  /** The invocation now running a session's turn (the hub cancels it by this id). */
  publishInvocation(runId: string, sessionId: string, id: string): void {
    this.send({ runId, invocation: { sessionId, id } });
  }

  /** A turn's outcome, every step of it journaled (the hub ends its turn on it before the engine's answer arrives). */
  publishOutcome(runId: string, turnId: string, sessionId: string, outcome: TurnOutcome): void {
    // A turn that ended waits on none of its requests any more (each was decided or cancelled).
    for (const [requestId, kept] of this.waitingRequests) if (kept.sessionId === sessionId) this.waitingRequests.delete(requestId);
    this.send({ runId, outcome: { turnId, sessionId, outcome } });
  }

  private send(line: FeedLine): void {
    if (this.listeners.size > 0) this.write(lineOf(line));
  }

  /** Queue one line's text (`lineOf`) for the hubs following. */
  private write(text: string, mayWait = false): void {
    if (this.listeners.size === 0) return;
    this.waiting += text;
    if (!mayWait || this.batchMs <= 0) {
      this.immediate ??= setImmediate(() => this.flush());
      return;
    }
    this.timer ??= setTimeout(() => this.flush(), this.batchMs);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.immediate) clearImmediate(this.immediate);
    this.immediate = null;
    const text = this.waiting;
    this.waiting = '';
    if (text.length === 0) return;
    for (const listener of this.listeners) listener(text);
  }

  /** Serve the feed on an HTTP/2 stream until the hub goes away. */
  follow(stream: ServerHttp2Stream, _headers: IncomingHttpHeaders): void {
    if (!stream.headersSent) stream.respond({ ':status': 200, 'content-type': 'application/x-ndjson' }); // the worker's handshake may have answered
    const listener = (text: string): void => {
      if (!stream.destroyed) stream.write(text);
    };
    // Lines already waiting for their window go to the hubs that followed before this one.
    this.flush();
    this.listeners.add(listener);
    const stop = (): void => void this.listeners.delete(listener);
    stream.once('close', stop);
    stream.once('error', stop);
    let first = '\n'; // the hub knows it is following
    for (const kept of this.waitingRequests.values()) first += kept.lines.join('');
    stream.write(first);
  }
}
