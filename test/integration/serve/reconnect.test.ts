import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { composeApp } from '../../../src/cli/compose';
import { startServer } from '../../../src/serve/server';
import { attachRemote } from '../../../src/serve/remote-core';
import type { LegionEvent } from '../../../src/events/types';
import { HOME_SESSION_ID, startState } from '../../../components/state/home-lane';
import { stateFromCore } from '../../../components/state/from-core';
import { createUiStore } from '../../../components/state/store';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { serveContext, setupServeWorkspace } from '../../helpers/serve-workspace';

/** A socket in front of the server's whose connections the test can cut (a dropped link). */
async function cuttableProxy(path: string, target: string): Promise<{ cut(): void; hold(down: boolean): void; close(): Promise<void> }> {
  const pairs = new Set<[Socket, Socket]>();
  let down = false;
  const proxy = createServer((front) => {
    if (down) return void front.destroy(); // the link is down: connections fail
    const back = connect(target);
    front.pipe(back);
    back.pipe(front);
    const pair: [Socket, Socket] = [front, back];
    pairs.add(pair);
    const drop = (): void => { front.destroy(); back.destroy(); pairs.delete(pair); };
    front.on('error', drop).on('close', drop);
    back.on('error', drop).on('close', drop);
  });
  await new Promise<void>((r) => proxy.listen(path, r));
  return {
    cut: () => { for (const [f, b] of [...pairs]) { f.destroy(); b.destroy(); } },
    hold: (value) => { down = value; },
    close: () => new Promise<void>((r) => proxy.close(() => r())),
  };
}

test('a dropped connection comes back with since: the events in between are replayed, none twice, none missing, an approval requested meanwhile included', { timeout: 90_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    const app = await composeApp(serveContext(dir, env));
    const socket = join(dir, '.legion', 'serve.sock');
    const server = await startServer({ core: app.core, history: app.history, workflows: app.workflows, socketPath: socket, workspace: dir, version: 'test', log: () => undefined });
    const proxy = await cuttableProxy(join(dir, 'proxy.sock'), socket);
    try {
      const core = (await attachRemote({ socket: join(dir, 'proxy.sock') })).core;
      const seen: LegionEvent[] = [];
      const notices: string[] = [];
      core.bus.subscribeAll((e) => {
        if (e.type === 'notice') notices.push(e.message);
        else seen.push(e);
      });
      const sent = core.send('worker', 'hello there');
      assert.ok(sent.ok);
      await until(() => seen.filter((e) => e.type === 'text-delta').length >= 2, 'the stream to start');
      proxy.cut();
      await app.core.idle('session-user__worker__default');
      await until(() => notices.some((n) => /is back; nothing was missed/.test(n)), `the reconnection: ${notices.join(' | ')}`);
      await until(() => core.history('session-user__worker__default').length === app.core.history('session-user__worker__default').length, 'the history');
      assert.deepEqual(core.history('session-user__worker__default'), app.core.history('session-user__worker__default'));
      await until(() => seen.at(-1)?.seq === app.core.bus.lastSeq(), 'the last event');
      const seqs = seen.map((e) => e.seq);
      assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), 'in order');
      assert.equal(new Set(seqs).size, seqs.length, 'none twice');
      // Commands work on the new connection.
      assert.ok(core.send('worker', 'again', 'second').ok);
      assert.equal(await core.idle('session-user__worker__second'), 'hello from the worker, streamed in small pieces so a client sees many deltas arrive one after another.');

      // An approval requested while the link is down is in the queue once it is back (replayed after `since`).
      proxy.hold(true);
      proxy.cut();
      const write = app.core.send('worker', 'write the file', 'w');
      assert.ok(write.ok);
      await until(() => app.core.pendingApprovals().length === 1, 'the request on the server');
      assert.equal(core.pendingApprovals().length, 0, 'not seen while the link is down');
      proxy.hold(false);
      await until(() => notices.filter((n) => /is back; nothing was missed/.test(n)).length === 2, `the second reconnection: ${notices.join(' | ')}`);
      await until(() => core.pendingApprovals().length === 1, 'the request in the queue of the front end');
      const requestId = app.core.pendingApprovals()[0]!.requestId;
      assert.equal(core.pendingApprovals()[0]!.requestId, requestId);
      assert.deepEqual(core.resolveApprovals([requestId], 'approved'), { ok: true });
      assert.equal(await app.core.idle(write.sessionId), 'wrote it');
      await until(() => core.pendingApprovals().length === 0, 'the decision applied');
      await core.shutdown('test');
    } finally {
      await proxy.close();
      await server.close('test over');
      await app.close('test over');
    }
  });
});

test('a reconnection answered only with a snapshot (the events since fell out of the ring): the notice says so and the core and the UI are rebuilt from it', { timeout: 90_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    const app = await composeApp(serveContext(dir, env));
    const socket = join(dir, '.legion', 'serve.sock');
    const server = await startServer({ core: app.core, history: app.history, workflows: app.workflows, socketPath: socket, workspace: dir, version: 'test', log: () => undefined, limits: { ringEvents: 5 } });
    const proxy = await cuttableProxy(join(dir, 'proxy.sock'), socket);
    try {
      const core = (await attachRemote({ socket: join(dir, 'proxy.sock') })).core;
      const { state } = startState(core, { maxLanes: 4, autoOpenLanes: true }, false);
      const store = createUiStore({ core, initial: state, frameMs: 1 });
      const unresync = core.onResync(() => store.dispatch({ type: 'resync', fresh: stateFromCore(core, { maxLanes: 4, autoOpenLanes: true }, false) }));
      const notices: string[] = [];
      core.bus.subscribe('notice', (e) => notices.push(e.message));
      try {
        // While the link is down, far more than five events happen: a streamed answer and a request.
        proxy.hold(true);
        proxy.cut();
        const hello = app.core.send('worker', 'hello');
        assert.ok(hello.ok);
        await app.core.idle(hello.sessionId);
        const write = app.core.send('worker', 'write the file', 'w');
        assert.ok(write.ok);
        await until(() => app.core.pendingApprovals().length === 1, 'the request on the server');
        proxy.hold(false);
        await until(() => notices.some((n) => /events were missed .*rebuilt from its snapshot/.test(n)), `the rebuild: ${notices.join(' | ')}`);
        assert.ok(!notices.some((n) => /nothing was missed|went away/.test(n)), notices.join(' | '));
        // The core: everything the server has.
        const requestId = app.core.pendingApprovals()[0]!.requestId;
        assert.deepEqual(core.pendingApprovals().map((r) => r.requestId), [requestId]);
        assert.deepEqual(core.history(hello.sessionId), app.core.history(hello.sessionId));
        // The UI: the queue, the sessions and their messages, the home lane still first and focused; the status line says it.
        const ui = store.getState();
        assert.deepEqual(Object.keys(ui.pending), [requestId]);
        assert.equal(ui.sessions[hello.sessionId]?.entries.length, app.core.history(hello.sessionId).length);
        assert.ok(ui.sessions[write.sessionId]);
        assert.equal(ui.lanes[0], HOME_SESSION_ID);
        assert.equal(ui.focus, 0);
        assert.match(ui.notice?.text ?? '', /rebuilt from its snapshot/);
        // And it goes on live: the decision from this front end reaches the server, its events come back.
        assert.deepEqual(core.resolveApprovals([requestId], 'approved'), { ok: true });
        assert.equal(await app.core.idle(write.sessionId), 'wrote it');
        await until(() => store.getState().sessions[write.sessionId]!.entries.length === app.core.history(write.sessionId).length, 'the answer in the UI');
        assert.deepEqual(Object.keys(store.getState().pending), []);
      } finally {
        unresync();
        store.dispose();
        await core.shutdown('test');
      }
    } finally {
      await proxy.close();
      await server.close('test over');
      await app.close('test over');
    }
  });
});
