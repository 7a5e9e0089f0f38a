import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { composeApp, type AppSession } from '../../../src/cli/compose';
import { startServer, type LegionServer, type ServerLimits } from '../../../src/serve/server';
import { connectServer, type Connection } from '../../../src/serve/connection';
import type { LegionEvent } from '../../../src/events/types';
import type { Snapshot } from '../../../src/serve/snapshot';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { serveContext, setupServeWorkspace } from '../../helpers/serve-workspace';

interface Served {
  app: AppSession;
  server: LegionServer;
  socket: string;
  log: string[];
}

async function serve(dir: string, limits: Partial<ServerLimits> = {}): Promise<Served> {
  const env = await setupServeWorkspace(dir);
  const app = await composeApp(serveContext(dir, env));
  const socket = join(dir, '.legion', 'serve.sock');
  const log: string[] = [];
  const server = await startServer({ core: app.core, history: app.history, workflows: app.workflows, socketPath: socket, workspace: dir, version: 'test', log: (l) => log.push(l), limits });
  return { app, server, socket, log };
}

async function stop(s: Served): Promise<void> {
  await s.server.close('test over');
  await s.app.close('test over');
}

function collector(): { events: LegionEvent[]; next(pred: (e: LegionEvent) => boolean): Promise<LegionEvent>; onEvent(e: LegionEvent): void } {
  const events: LegionEvent[] = [];
  const waiters: { pred: (e: LegionEvent) => boolean; resolve: (e: LegionEvent) => void }[] = [];
  return {
    events,
    onEvent(e) {
      events.push(e);
      for (const w of [...waiters]) if (w.pred(e)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(e); }
    },
    next(pred) {
      const seen = events.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ pred, resolve }));
    },
  };
}

/** A raw socket client: write lines, read parsed lines. */
function raw(socket: string): Promise<{ s: Socket; lines: unknown[]; next(): Promise<unknown> }> {
  return new Promise((resolve, reject) => {
    const s = connect(socket);
    const lines: unknown[] = [];
    let buf = '';
    let wake: (() => void) | null = null;
    s.on('data', (d) => {
      buf += d.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) { lines.push(JSON.parse(buf.slice(0, nl))); buf = buf.slice(nl + 1); }
      wake?.();
    });
    let read = 0;
    const next = async (): Promise<unknown> => {
      while (read >= lines.length) await new Promise<void>((r) => { wake = r; });
      return lines[read++];
    };
    s.once('connect', () => resolve({ s, lines, next }));
    s.once('error', reject);
  });
}

test('two clients: a request for approval reaches both, a decision from one reaches the other, the turn finishes', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const s = await serve(dir);
    const a = collector();
    const b = collector();
    let ca: Connection | undefined;
    let cb: Connection | undefined;
    try {
      ca = await connectServer({ socket: s.socket, onEvent: a.onEvent, client: 'a' });
      cb = await connectServer({ socket: s.socket, onEvent: b.onEvent, client: 'b' });
      assert.equal(ca.welcome.replay, 'snapshot');
      assert.equal(ca.welcome.runId, s.app.runId);
      const snap = (await ca.request('snapshot', {})) as Snapshot;
      assert.ok(snap.participants.some((p) => p.id === 'worker'));
      const sent = (await ca.request('send', { responderId: 'worker', text: 'write the file' })) as { ok: boolean; sessionId: string };
      assert.equal(sent.ok, true);
      const asked = await b.next((e) => e.type === 'approval-request');
      assert.equal(asked.type === 'approval-request' && asked.toolName, 'file_write');
      const pending = (await ca.request('pendingApprovals', {})) as { requestId: string }[];
      assert.equal(pending.length, 1);
      const requestId = asked.type === 'approval-request' ? asked.requestId : '';
      assert.deepEqual(await cb.request('resolveApprovals', { requestIds: [requestId], decision: 'approved' }), { ok: true });
      await a.next((e) => e.type === 'approval-resolve' && e.requestId === requestId);
      assert.equal(await ca.request('idle', { sessionId: sent.sessionId }), 'wrote it');
      assert.deepEqual(await ca.request('pendingApprovals', {}), []);
      // The same decision again is refused as a value, not a protocol error.
      const again = (await cb.request('resolveApprovals', { requestIds: [requestId], decision: 'approved' })) as { ok: boolean };
      assert.equal(again.ok, false);
      // Both saw the same events in the same order.
      const seqs = (c: { events: LegionEvent[] }): number[] => c.events.map((e) => e.seq);
      const common = Math.min(a.events.length, b.events.length);
      assert.deepEqual(seqs(a).slice(0, common), seqs(b).slice(0, common));
    } finally {
      ca?.close();
      cb?.close();
      await stop(s);
    }
  });
});

test('re-attach with since: the events after it are replayed in order; too far back means a snapshot', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const s = await serve(dir, { ringEvents: 50 });
    try {
      const first = collector();
      const c1 = await connectServer({ socket: s.socket, onEvent: first.onEvent });
      const sent = (await c1.request('send', { responderId: 'worker', text: 'hello there' })) as { sessionId: string };
      await c1.request('idle', { sessionId: sent.sessionId });
      c1.close();
      const lastSeen = first.events[first.events.length - 10]!.seq;
      const again = collector();
      const c2 = await connectServer({ socket: s.socket, since: lastSeen, onEvent: again.onEvent });
      assert.equal(c2.welcome.replay, 'since');
      await again.next((e) => e.seq === first.events[first.events.length - 1]!.seq);
      assert.deepEqual(again.events.map((e) => e.seq), first.events.slice(-9).map((e) => e.seq));
      c2.close();
      const old = await connectServer({ socket: s.socket, since: 1, onEvent: () => undefined });
      assert.equal(old.welcome.replay, 'snapshot', 'the ring holds 50 events, not all since seq 1');
      old.close();
    } finally {
      await stop(s);
    }
  });
});

test('hostile input: bad JSON, wrong types, unknown methods, requests before hello, a 10 MB line: errors, never a crash', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const s = await serve(dir);
    try {
      const r = await raw(s.socket);
      r.s.write('{"id":1,"method":"sessions"}\n');
      assert.deepEqual(await r.next(), { id: 1, error: { kind: 'protocol', message: 'say hello first' } });
      r.s.write('{"hello":{"protocol":1}}\n');
      assert.equal(((await r.next()) as { welcome: { replay: string } }).welcome.replay, 'snapshot');
      r.s.write('this is not json\n');
      assert.deepEqual(await r.next(), { error: { kind: 'bad-json', message: 'not a JSON line' } });
      r.s.write('{"id":2,"method":"shutdown"}\n');
      assert.deepEqual(await r.next(), { id: 2, error: { kind: 'unknown-method', message: 'unknown method "shutdown"' } });
      r.s.write('{"id":3,"method":"history","params":{"sessionId":42}}\n');
      assert.equal(((await r.next()) as { error: { kind: string } }).error.kind, 'bad-params');
      const big = Buffer.alloc(10 * 1024 * 1024, 0x7b);
      for (let off = 0; off < big.length; off += 1 << 20) r.s.write(big.subarray(off, off + (1 << 20)));
      r.s.write('\n{"id":4,"method":"sessions"}\n');
      assert.equal(((await r.next()) as { error: { kind: string } }).error.kind, 'oversize');
      assert.deepEqual(await r.next(), { id: 4, result: [] });
      r.s.write(Buffer.from([0xff, 0xfe, 0x00, 0x0a]));
      assert.equal(((await r.next()) as { error: { kind: string } }).error.kind, 'bad-json');
      r.s.destroy();
      // Still serving.
      const c = await connectServer({ socket: s.socket, onEvent: () => undefined });
      assert.deepEqual(await c.request('sessions', {}), []);
      c.close();
    } finally {
      await stop(s);
    }
  });
});

test('a client that stops reading is cut off; the agents and the other clients go on', { timeout: 90_000 }, async () => {
  await withTempDir(async (dir) => {
    // stallMs 3 s: the stuck client never reads, so only noticing it waits; the good client, slowed by a loaded machine, is never taken for stuck.
    const s = await serve(dir, { maxClientBuffer: 256 * 1024, stallMs: 3_000 });
    try {
      const stuck = await raw(s.socket);
      stuck.s.write('{"hello":{"protocol":1}}\n');
      stuck.s.pause(); // never reads again
      const good = collector();
      const c = await connectServer({ socket: s.socket, onEvent: good.onEvent });
      // Floods until the stuck client is cut off (event-driven: the server judges a client on its next write
      // after stallMs, however long the floods take on a loaded machine); 60 s is a safety bound only.
      const cutOff = (): boolean => s.log.some((l) => /client 1: cut off \(not reading/.test(l));
      const end = Date.now() + 60_000;
      let floods = 0;
      while (!cutOff() && Date.now() < end) {
        const sent = (await c.request('send', { responderId: 'worker', text: 'flood' })) as { sessionId: string };
        const text = (await c.request('idle', { sessionId: sent.sessionId })) as string;
        assert.ok(text.length > 1_000_000);
        floods += 1;
      }
      assert.ok(cutOff(), s.log.join('\n'));
      assert.ok(floods >= 1);
      assert.equal(s.server.clientCount(), 1);
      assert.ok(good.events.some((e) => e.type === 'message-add'));
      c.close();
    } finally {
      await stop(s);
    }
  });
});

test('the socket is 0600 from its first moment', { timeout: 30_000 }, async () => {
  await withTempDir(async (dir) => {
    const s = await serve(dir);
    try {
      assert.equal(statSync(s.socket).mode & 0o777, 0o600);
      assert.equal(statSync(join(dir, '.legion')).mode & 0o077, 0, '.legion/ is private too');
    } finally {
      await stop(s);
    }
  });
});

const asRoot = process.getuid?.() === 0;

/** Connect to `socket` as uid/gid 65534 (`nobody`): what the kernel answers ("connected" or the error code). */
function connectAsNobody(socket: string): string {
  const probe = `require('net').connect(${JSON.stringify(socket)}).on('connect',()=>{console.log('connected');process.exit(0)}).on('error',(e)=>{console.log(e.code);process.exit(0)})`;
  const out = spawnSync(process.execPath, ['-e', probe], { uid: 65534, gid: 65534, encoding: 'utf8', cwd: '/', timeout: 20_000 });
  assert.equal(out.status, 0, out.stderr);
  return out.stdout.trim();
}

test('another local user cannot connect: refused by the socket\'s own mode, even in a directory every user can reach', { skip: asRoot ? false : 'runs a client as another user (uid 65534), which needs root', timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    const app = await composeApp(serveContext(dir, env));
    // Not the private .legion/: a directory (and parents) any user may traverse, so only the socket's mode stands in the way.
    chmodSync(dir, 0o755);
    const open = join(dir, 'open');
    mkdirSync(open, { mode: 0o777 });
    chmodSync(open, 0o777);
    const socket = join(open, 'serve.sock');
    const server = await startServer({ core: app.core, history: app.history, workflows: app.workflows, socketPath: socket, workspace: dir, version: 'test', log: () => undefined });
    try {
      assert.equal(connectAsNobody(socket), 'EACCES');
      // The probe itself works: with the mode opened up (what the server never does), nobody connects.
      chmodSync(socket, 0o666);
      assert.equal(connectAsNobody(socket), 'connected');
      chmodSync(socket, 0o600);
      // The workspace's real socket sits in .legion/ (0700) as well.
      const s = await serve(join(dir, 'ws'));
      try {
        chmodSync(join(dir, 'ws'), 0o755);
        assert.equal(connectAsNobody(s.socket), 'EACCES');
      } finally {
        await stop(s);
      }
    } finally {
      await server.close('test over');
      await app.close('test over');
    }
  });
});

test('a client that stops reading cannot grow the server\'s memory: cut off at the hard cap of queued bytes, the agents finish', { timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    const hard = 256 * 1024;
    // Never judged stalled: only the hard cap can cut the client off.
    const s = await serve(dir, { hardClientBuffer: hard, stallMs: 600_000 });
    try {
      const stuck = await raw(s.socket);
      stuck.s.write('{"hello":{"protocol":1}}\n');
      await until(() => stuck.lines.length > 0, 'the welcome');
      stuck.s.pause();
      // Two floods (about 5 MB of events) while the stuck client reads nothing; the core drives them (a
      // reading client in this process would share its event loop with the server and be cut off as well).
      const a = s.app.core.send('worker', 'flood', 'one');
      const b = s.app.core.send('worker', 'flood', 'two');
      assert.ok(a.ok && b.ok);
      const [ta, tb] = await Promise.all([s.app.core.idle(a.sessionId), s.app.core.idle(b.sessionId)]);
      assert.ok(ta.length > 1_000_000 && tb === ta, 'both turns finished whole');
      const cut = s.log.map((l) => /client 1: cut off \(not reading: (\d+) bytes queued\)/.exec(l)).find((m) => m !== null);
      assert.ok(cut, s.log.join('\n'));
      // Bounded: the cap plus at most one line (the flood's final message, about 1.3 MB), never the 5 MB sent.
      assert.ok(Number(cut[1]) > hard && Number(cut[1]) < hard + 1.5 * 1024 * 1024, `queued ${cut[1]} bytes`);
      await until(() => s.server.clientCount() === 0, 'the stuck client to be gone');
      stuck.s.destroy();
    } finally {
      await stop(s);
    }
  });
});

test('limits: clients past maxClients are refused with one error line (and the server still stops: a refused socket once held server.close forever); requests past maxPendingPerClient are refused, the others answered', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const s = await serve(dir, { maxClients: 2, maxPendingPerClient: 2 });
    const open: Connection[] = [];
    try {
      open.push(await connectServer({ socket: s.socket, onEvent: () => undefined }));
      open.push(await connectServer({ socket: s.socket, onEvent: () => undefined }));
      await assert.rejects(connectServer({ socket: s.socket, onEvent: () => undefined }), /more than 2 clients/);
      assert.equal(s.server.clientCount(), 2);
      const c = open[0]!;
      const sent = (await c.request('send', { responderId: 'worker', text: 'trickle', name: 'slow' })) as { sessionId: string };
      // Two `idle` waits are held; a third is refused at once, while they wait.
      const waits = [c.request('idle', { sessionId: sent.sessionId }), c.request('idle', { sessionId: sent.sessionId })];
      await assert.rejects(c.request('idle', { sessionId: sent.sessionId }), (e: Error & { kind?: string }) => e.kind === 'refused' && /more than 2 requests waiting/.test(e.message));
      s.app.core.cancel(sent.sessionId);
      await Promise.all(waits);
      // Once answered, requests are taken again.
      assert.deepEqual((await c.request('sessions', {}) as { id: string }[]).map((x) => x.id), [sent.sessionId]);
      open.pop()!.close();
      await until(() => s.server.clientCount() === 1, 'the second client to be gone');
      open.push(await connectServer({ socket: s.socket, onEvent: () => undefined }));
    } finally {
      for (const c of open) c.close();
      await stop(s);
    }
  });
});

test('a connection that never says hello is closed after helloMs, freeing its place; one that says hello stays', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    // helloMs is far above what connectServer needs to say hello, so a stalled event loop on a loaded machine cannot fail the well-behaved clients.
    const s = await serve(dir, { maxClients: 2, helloMs: 2000 });
    try {
      const c = await connectServer({ socket: s.socket, onEvent: () => undefined });
      const silent = await raw(s.socket);
      const closed = new Promise<void>((r) => silent.s.once('close', () => r()));
      assert.deepEqual(await silent.next(), { error: { kind: 'protocol', message: 'no hello within 2000 ms' } });
      await closed;
      assert.ok(s.log.some((l) => l === 'client 2: closed (no hello within 2000 ms)'), s.log.join('\n'));
      await until(() => s.server.clientCount() === 1, 'its place to be free');
      const third = await connectServer({ socket: s.socket, onEvent: () => undefined });
      // helloMs has passed since the first client said hello (the silent one, connected after it, was closed): it is still served.
      assert.deepEqual(await c.request('sessions', {}), []);
      assert.deepEqual(await third.request('sessions', {}), []);
      c.close();
      third.close();
    } finally {
      await stop(s);
    }
  });
});

test('a connection that never says hello and never reads (its error lines cannot be flushed) is still dropped after helloMs, freeing its place', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    // helloMs 2 s: the greedy client never says hello, so only its drop waits; a loaded machine never makes the good client's hello late.
    const s = await serve(dir, { maxClients: 1, helloMs: 2_000 });
    try {
      // Never read (no 'data' listener: the socket stays paused), so the server's answers back up.
      const greedy = connect(s.socket);
      await new Promise<void>((r, j) => { greedy.once('connect', () => r()); greedy.once('error', j); });
      greedy.on('error', () => undefined);
      greedy.write('not json\n'.repeat(40_000));
      await until(() => s.log.some((l) => l === 'client 1: closed (no hello within 2000 ms)'), 'the hello timeout');
      await until(() => s.server.clientCount() === 0, 'its place to be free');
      const c = await connectServer({ socket: s.socket, onEvent: () => undefined });
      assert.deepEqual(await c.request('sessions', {}), []);
      c.close();
      greedy.destroy();
    } finally {
      await stop(s);
    }
  });
});
