import { createServer as createHttp2Server, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { EVENTS_PATH } from '../../src/engine/event-feed';

/**
 * A fake worker for hub tests (docs/engine.md#streaming-and-the-hub): it serves only the event
 * feed, answering each feed request with an open stream pushed to `feeds` for the test to write,
 * on `port` (default: a free one).
 */
export async function startFakeWorkerFeed(feeds: ServerHttp2Stream[], port = 0): Promise<{ server: Http2Server; url: string }> {
  const server = createHttp2Server();
  server.on('stream', (stream, headers) => {
    if (headers[':path'] !== EVENTS_PATH) return void stream.close();
    stream.respond({ ':status': 200 });
    stream.write('\n');
    feeds.push(stream);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
