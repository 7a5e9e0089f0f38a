import type { ServerHttp2Stream, IncomingHttpHeaders } from 'node:http2';
import type { EventInput, LegionEvent } from '../events/types';

/** The path on a worker's endpoint where hubs follow its events (docs/engine.md#streaming-and-the-hub). */
export const EVENTS_PATH = '/legion/events';

/**
 * One line of the feed: an event of a run without its stamp, or the awakeable a request for the
 * user waits on (the hub resolves it when a front end decides; docs/engine.md#approvals).
 */
export type FeedLine =
  | { readonly runId: string; readonly event: EventInput }
  | { readonly runId: string; readonly awakeable: { readonly requestId: string; readonly id: string } }
  | { readonly runId: string; readonly invocation: { readonly sessionId: string; readonly id: string } };

/**
 * Events of the turns running on this worker, fanned out live to the hubs that follow them.
 * Nothing is kept: a hub that is not connected misses them (the projection on disk is the
 * record; deltas are not durable by design). A turn's own `run-start`/`run-end` (each turn
 * builds its core) are not the run's and are not published.
 */
export class EventFeed {
  private readonly listeners = new Set<(line: string) => void>();

  publish(event: LegionEvent): void {
    if (this.listeners.size === 0 || event.type === 'run-start' || event.type === 'run-end') return;
    const { seq: _seq, at: _at, runId, ...input } = event;
    this.send({ runId, event: input });
  }

  publishAwakeable(runId: string, requestId: string, id: string): void {
    this.send({ runId, awakeable: { requestId, id } });
  }

  /** The invocation now running a session's turn (the hub cancels it by this id). */
  publishInvocation(runId: string, sessionId: string, id: string): void {
    this.send({ runId, invocation: { sessionId, id } });
  }

  private send(line: FeedLine): void {
    if (this.listeners.size === 0) return;
    const text = JSON.stringify(line) + '\n';
    for (const listener of this.listeners) listener(text);
  }

  /** Serve the feed on an HTTP/2 stream until the hub goes away. */
  follow(stream: ServerHttp2Stream, _headers: IncomingHttpHeaders): void {
    stream.respond({ ':status': 200, 'content-type': 'application/x-ndjson' });
    const listener = (line: string): void => {
      if (!stream.destroyed) stream.write(line);
    };
    this.listeners.add(listener);
    const stop = (): void => void this.listeners.delete(listener);
    stream.once('close', stop);
    stream.once('error', stop);
    stream.write('\n'); // the hub knows it is following
  }
}
