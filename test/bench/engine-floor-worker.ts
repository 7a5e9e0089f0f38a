/**
 * The floor's worker (engine-floor.ts): a minimal Restate virtual object served the way
 * `legion worker` serves Legion's (src/engine/worker.ts: `createEndpointHandler` of the same
 * SDK, its default protocol, on a node:http2 server; the object's options as LegionSession's).
 * Its exclusive handler `turn` takes N and runs N no-op `ctx.run` steps, each journaled and
 * acknowledged by the engine before the next, as a turn's `model`/`tool-start`/`tool` steps are.
 * Its argument: the object's name. Prints its URL on stdout once listening; SIGTERM ends it.
 */
import { createServer, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as restate from '@restatedev/restate-sdk';
import { TURN_RETRY } from '../../src/engine/session-object';
import { ensurePromiseWithResolvers } from '../../src/engine/node-compat';

const INACTIVITY_MS = 60 * 60 * 1000;

const floor = restate.object({
  name: process.argv[2] ?? 'LegionFloor',
  handlers: {
    turn: async (ctx: restate.ObjectContext, steps: number): Promise<number> => {
      for (let i = 0; i < steps; i++) await ctx.run(`step ${i + 1}`, () => i);
      return steps;
    },
  },
  options: { retryPolicy: TURN_RETRY, inactivityTimeout: INACTIVITY_MS, abortTimeout: INACTIVITY_MS },
});

ensurePromiseWithResolvers();
const handler = restate.createEndpointHandler({ services: [floor] });
const server = createServer();
const sessions = new Set<ServerHttp2Session>();
server.on('session', (session) => {
  sessions.add(session);
  session.once('close', () => sessions.delete(session));
});
server.on('request', (request, response) => handler(request, response));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  for (const session of sessions) session.destroy();
});
