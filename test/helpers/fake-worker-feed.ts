import { createServer } from 'node:http';
import { createServer as createHttp2Server, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { EVENTS_PATH, type EventFeed } from '../../src/engine/event-feed';
import { SESSION_OBJECT } from '../../src/engine/session-object';
import { answerFeedHandshake, workspaceFeedToken } from '../../src/engine/feed-token';
import { join } from 'node:path';

/** The feed token of the fake workers and their hubs (a real worker's check: test/integration/engine/other-user.test.ts). */
export const TEST_FEED_TOKEN = 'test-feed-token-0123456789abcdefghijklmnopq';

/**
 * A fake worker for hub tests (docs/engine.md#streaming-and-the-hub): it serves only the event
 * feed, answering each feed request with an open stream pushed to `feeds` for the test to write,
 * on `port` (default: a free one).
 */
export async function startFakeWorkerFeed(feeds: ServerHttp2Stream[], port = 0, token = TEST_FEED_TOKEN): Promise<{ server: Http2Server; url: string }> {
  const server = createHttp2Server();
  server.on('stream', (stream, headers) => {
    if (headers[':path'] !== EVENTS_PATH) return void stream.close();
    answerFeedHandshake(stream, headers, token, () => {
      stream.write('\n');
      feeds.push(stream);
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A fake engine with one worker whose feed is a real `EventFeed` (see `startFeedWorker`). */
export interface FeedWorker {
  /** The admin API's URL; it answers as the ingress too (`/restate/health`), so a hub composes on it. */
  readonly admin: string;
  /** The feed streams the hubs opened, in order. */
  readonly streams: ServerHttp2Stream[];
  close(): Promise<void>;
}

/**
 * A worker serving `feed` as `legion worker` does (EventFeed.follow), and an admin API that lists
 * it and says it is healthy: what a hub needs to follow the worker, no engine behind it (turns
 * sent to the ingress are not answered).
 */
/** `token`: the feed token, or a function reading it when a hub asks (a workspace's, made by the hub's start: `workspaceToken`). */
export async function startFeedWorker(feed: EventFeed, token: string | (() => string) = TEST_FEED_TOKEN): Promise<FeedWorker> {
  const streams: ServerHttp2Stream[] = [];
  const worker = createHttp2Server();
  worker.on('stream', (stream, headers) => {
    if (headers[':path'] !== EVENTS_PATH) return void stream.close();
    answerFeedHandshake(stream, headers, typeof token === 'string' ? token : token(), () => {
      streams.push(stream);
      feed.follow(stream, headers);
    });
  });
  await new Promise<void>((r) => worker.listen(0, '127.0.0.1', r));
  const workerUrl = `http://127.0.0.1:${(worker.address() as AddressInfo).port}`;
  const admin = createServer((req, res) => {
    if (req.url === '/deployments') return void res.end(JSON.stringify({ deployments: [{ id: 'dp_1', uri: workerUrl, services: [{ name: SESSION_OBJECT }] }] }));
    if (req.url === '/health' || req.url === '/restate/health') return void res.end('{}');
    req.resume(); // a turn sent to the ingress: never answered
  });
  await new Promise<void>((r) => admin.listen(0, '127.0.0.1', r));
  return {
    admin: `http://127.0.0.1:${(admin.address() as AddressInfo).port}`,
    streams,
    close: async () => {
      admin.closeAllConnections();
      await new Promise((r) => admin.close(r));
      for (const s of streams) s.destroy();
      await new Promise((r) => worker.close(r));
    },
  };
}

/** The feed token of the workspace at `dir` (what its hub proves; read when asked, once the hub made it). */
export function workspaceToken(dir: string): () => string {
  return () => {
    const token = workspaceFeedToken(join(dir, '.legion'));
    if (!token.ok) throw new Error(token.error);
    return token.token;
  };
}
