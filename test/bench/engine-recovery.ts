/**
 * engine (recovery part, docs/engine.md#performance): two `legion worker`s behind one balanced
 * URL (registered with the engine as one deployment), a turn streaming its answer on one of them;
 * that worker is killed with SIGKILL. recoveryMs: from the kill to the turn's next event,
 * read off the surviving worker's event feed (docs/engine.md#streaming-and-the-hub) — the
 * engine's retry delay (TURN_RETRY, first retry after 200 ms), the balancer's connect to the
 * live worker, its build of the run's core, the journal replayed (the finished model call and
 * tool from the journal) and the cut model call asked again up to its first delta. Each round
 * restarts the killed worker before the next.
 */
import { connect, type ClientHttp2Session } from 'node:http2';
import { createRunStore } from '../../src/session/run-store';
import { randomIds, sessionIdOf } from '../../src/session/ids';
import { layoutFor } from '../../src/storage/layout';
import { freePort } from '../../src/engine/local-engine';
import { registerDeployment } from '../../src/engine/admin';
import { EVENTS_PATH, type FeedLine } from '../../src/engine/event-feed';
import { requestFeed, workspaceFeedToken } from '../../src/engine/feed-token';
import { sleep } from './harness';
import { BUILT, killHard, sendTurn, setupEngineWorkspace, startBalancer, startEngine, startFakeModel, startWorker, type WorkerProcess } from '../helpers/engine-fixture';

/** The workspace's feed token (the hub's and the workers'). */
function feedTokenOf(dir: string): string {
  const token = workspaceFeedToken(layoutFor(dir).legionDir);
  if (!token.ok) throw new Error(token.error);
  return token.token;
}

/** Follow a worker's event feed; `onLine` gets each line of `runId` with the time it arrived. */
function followFeed(port: number, runId: string, feedToken: string, onLine: (line: FeedLine, at: number) => void): ClientHttp2Session {
  const session = connect(`http://127.0.0.1:${port}`);
  session.on('error', () => undefined);
  const stream = requestFeed(session, EVENTS_PATH, feedToken, () => undefined, () => session.destroy());
  stream.setEncoding('utf8');
  stream.on('error', () => undefined);
  let buffered = '';
  stream.on('data', (chunk: string) => {
    const at = performance.now();
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf('\n')) !== -1) {
      const text = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      if (!text) continue;
      const line = JSON.parse(text) as FeedLine;
      if (line.runId === runId) onLine(line, at);
    }
  });
  return session;
}

const isDelta = (line: FeedLine): boolean => 'event' in line && line.event.type === 'text-delta';

export interface RecoveryFigures {
  readonly recoveryMs: number[];
  /** Kill → the model asked again for the cut call (the engine's retry reached the live worker and it replayed). */
  readonly reaskMs: number[];
}

export async function recoveryFigures(dir: string, rounds: number): Promise<RecoveryFigures> {
  const model = await startFakeModel({ answerChunks: 60, delayMs: 20 });
  const engine = await startEngine(dir);
  const ports = [await freePort(), await freePort()];
  const workers: WorkerProcess[] = [];
  const feeds: ClientHttp2Session[] = [];
  const lb = await startBalancer(ports);
  try {
    const env = await setupEngineWorkspace(dir, model.url, engine);
    const run = await createRunStore(layoutFor(dir), () => new Date(), randomIds).create(new Date());
    for (const port of ports) workers.push(await startWorker(dir, env, port, ['--no-register'], BUILT));
    const registered = await registerDeployment(engine.admin, `http://127.0.0.1:${lb.port}`);
    if (!registered.ok) throw new Error(registered.error);
    const recoveryMs: number[] = [];
    const reaskMs: number[] = [];
    for (let r = 0; r < rounds; r++) {
      // Which worker streams: the one whose feed carries the deltas.
      const deltas: { worker: number; at: number }[] = [];
      for (const f of feeds.splice(0)) f.destroy();
      ports.forEach((port, i) => feeds.push(followFeed(port, run.id, feedTokenOf(dir), (line, at) => {
        if (isDelta(line)) deltas.push({ worker: i, at });
      })));
      await sleep(200); // the feeds answered
      const name = `r${r}`;
      const outcome = sendTurn(engine.ingress, sessionIdOf({ initiatorId: 'user', responderId: 'builder', name }), { runId: run.id, responderId: 'builder', name, text: 'build it' });
      const deadline = Date.now() + 60_000;
      while (deltas.length < 5) {
        if (Date.now() > deadline) throw new Error('no deltas from either worker');
        await sleep(5);
      }
      const victim = deltas[0]!.worker;
      const asked = model.requests.length;
      const killedAt = performance.now();
      await killHard(workers[victim]!.child);
      let reask: number | undefined;
      while (!deltas.some((d) => d.worker !== victim && d.at > killedAt)) {
        if (reask === undefined && model.requests.length > asked) reask = performance.now() - killedAt;
        if (Date.now() > deadline) throw new Error('the turn did not go on on the other worker');
        await sleep(1);
      }
      recoveryMs.push(deltas.find((d) => d.worker !== victim && d.at > killedAt)!.at - killedAt);
      if (reask !== undefined) reaskMs.push(reask);
      const result = await outcome as { kind: string };
      if (result.kind !== 'done') throw new Error(`the turn ended ${JSON.stringify(result)}`);
      if (r < rounds - 1) workers[victim] = await startWorker(dir, env, ports[victim]!, ['--no-register'], BUILT);
    }
    return { recoveryMs, reaskMs };
  } finally {
    for (const f of feeds) f.destroy();
    lb.server.close();
    for (const w of workers) await killHard(w.child);
    try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
    await model.close();
  }
}
