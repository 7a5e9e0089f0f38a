import { createServer, type Http2Server, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createEndpointHandler, type LoggerTransport } from '@restatedev/restate-sdk';
import { sessionObject, type RunTurnOnWorker, type TurnSettled } from './session-object';
import { mailboxObject } from './mailbox';
import { EVENTS_PATH, type EventFeed } from './event-feed';
import { ensurePromiseWithResolvers } from './node-compat';
import { IDENTITY_KEY_PATTERN } from './identity';
import { answerFeedHandshake } from './feed-token';

export interface WorkerEndpoint {
  /** The URL the engine reaches this worker at. */
  readonly url: string;
  close(): Promise<void>;
}

/** `host:port` of `--listen` (default 127.0.0.1:9080); port 0 picks a free one. */
export function parseListen(value: string | undefined): { host: string; port: number } | { error: string } {
  if (value === undefined) return { host: '127.0.0.1', port: 9080 };
  const match = /^(\[[0-9a-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/i.exec(value);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) return { error: `--listen ${value}: expected host:port (e.g. 127.0.0.1:9080)` };
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

/**
 * Serve Legion's Restate services over HTTP/2 (the engine's bidirectional protocol) on
 * `host:port`. `identityKeys`: the public keys (`publickeyv1_…`) of the engines whose signed
 * requests the services accept (docs/engine.md#who-may-talk-to-what); required and checked
 * here: a worker that would run any caller's journal (a forged one saying an approval was
 * given) never serves. `feedToken`: what a hub must prove to follow the event feed (feed-token.ts).
 * `advertise` is the host put in the URL (default: `host`, or 127.0.0.1
 * for a wildcard address). `sdkLog`: where the SDK logs (sdk-log.ts; default: its own, to the console).
 */
export async function startWorkerEndpoint(options: { host: string; port: number; runTurn: RunTurnOnWorker; feed: EventFeed; identityKeys: readonly string[]; feedToken: string; advertise?: string; sdkLog?: LoggerTransport }): Promise<WorkerEndpoint> {
  if (options.identityKeys.length === 0) throw new Error('no request identity key: a worker serves only an engine that signs its requests');
  const bad = options.identityKeys.find((key) => !IDENTITY_KEY_PATTERN.test(key));
  if (bad !== undefined) throw new Error(`${bad} is not a request identity public key (publickeyv1_…)`);
  if (options.feedToken.length < 32) throw new Error('no feed token: a worker\'s event feed is served only to hubs that show the workspace\'s token');
  ensurePromiseWithResolvers();
  // A turn's outcome goes out on the feed as soon as the turn has it (the hub need not wait for the engine's answer).
  const settled: TurnSettled = (input, sessionId, turnId, outcome) => options.feed.publishOutcome(input.runId, turnId, sessionId, outcome);
  const restate = createEndpointHandler({ services: [sessionObject(options.runTurn, settled), mailboxObject()], identityKeys: [...options.identityKeys], ...(options.sdkLog ? { logger: options.sdkLog } : {}) });
  const server: Http2Server = createServer();
  // The engine and the hubs keep their HTTP/2 sessions open: `close` ends them, or the process would not exit.
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    if (headers[':path'] !== EVENTS_PATH) return;
    // The feed carries the sessions' content and the approvals' awakeable ids: only for hubs that prove the token.
    answerFeedHandshake(stream, headers, options.feedToken, () => options.feed.follow(stream, headers));
  });
  server.on('request', (request, response) => {
    if (request.url === EVENTS_PATH) return; // answered on its stream above
    restate(request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const wildcard = options.host === '0.0.0.0' || options.host === '::';
  const host = options.advertise ?? (wildcard ? '127.0.0.1' : options.host);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const session of sessions) session.destroy();
    }),
  };
}
