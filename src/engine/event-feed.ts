import type { ServerHttp2Stream, IncomingHttpHeaders } from 'node:http2';
import type { EventInput, LegionEvent } from '../events/types';

/** The path on a worker's endpoint where hubs follow its events (docs/engine.md#streaming-and-the-hub). */
export const EVENTS_PATH = '/legion/events';

/** One line of the feed: the run the event belongs to, and the event without its stamp. */
export interface FeedLine {
  readonly runId: string;
  readonly event: EventInput;
}

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
    const line = JSON.stringify({ runId, event: input } satisfies FeedLine) + '\n';
    for (const listener of this.listeners) listener(line);
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
