import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the webhook server received. */
export interface ReceivedHook {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/**
 * A local webhook endpoint on port 0. `behave` decides each answer: a status code, or
 * `'hang'` (read the body, never answer). Records every request; `next()` resolves with the
 * next one (event-driven tests, no sleeps).
 */
export interface WebhookServer {
  readonly url: string;
  readonly received: ReceivedHook[];
  next(): Promise<ReceivedHook>;
  behave: (hook: ReceivedHook, index: number) => number | 'hang';
  close(): Promise<void>;
}

export async function startWebhookServer(behave: WebhookServer['behave'] = () => 200): Promise<WebhookServer> {
  const received: ReceivedHook[] = [];
  let waiters: ((hook: ReceivedHook) => void)[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hook = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(hook);
      const answer = self.behave(hook, received.length - 1);
      const wake = waiters;
      waiters = [];
      for (const w of wake) w(hook);
      if (answer === 'hang') {
        hanging.push(res);
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const self: WebhookServer = {
    url: `http://127.0.0.1:${port}/hook/secret-topic`,
    received,
    behave,
    next: () => new Promise((resolve) => waiters.push(resolve)),
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return self;
}
