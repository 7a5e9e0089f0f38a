import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { composeApp } from '../../../src/cli/compose';
import { startServer } from '../../../src/serve/server';
import { attachRemote, type RemoteCore } from '../../../src/serve/remote-core';
import type { LegionEvent } from '../../../src/events/types';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { serveContext, setupServeWorkspace } from '../../helpers/serve-workspace';

test('remote cores: the same lanes and queue everywhere, a decision in one disappears from the other, detach leaves the agents working, re-attach shows everything', { timeout: 90_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    const app = await composeApp(serveContext(dir, env));
    const socket = join(dir, '.legion', 'serve.sock');
    const server = await startServer({ core: app.core, history: app.history, workflows: app.workflows, socketPath: socket, workspace: dir, version: 'test', log: () => undefined, providerLabel: 'faux', demo: false });
    const cores: RemoteCore[] = [];
    try {
      const a = (await attachRemote({ socket })).core;
      const b = (await attachRemote({ socket })).core;
      cores.push(a, b);
      assert.equal(a.runId, app.runId);
      assert.equal(a.welcome.providerLabel, 'faux');
      const seenByA: LegionEvent[] = [];
      // What a front end does: read the core in reaction to an event; the mirror is already current.
      const readsInReaction: string[] = [];
      a.bus.subscribeAll((event) => {
        seenByA.push(event);
        if (event.type === 'message-add') readsInReaction.push(`${a.history(event.sessionId).length}`);
      });
      let queueOfB = 0;
      b.bus.subscribe('approval-request', () => { queueOfB = b.pendingApprovals().length; });

      const sent = a.send('worker', 'write the file');
      assert.deepEqual(sent, { ok: true, sessionId: 'session-user__worker__default', queued: false });
      assert.deepEqual(a.send('nobody', 'x'), { ok: false, error: 'no participant "nobody"' });
      await until(() => b.pendingApprovals().length === 1 && a.pendingApprovals().length === 1, 'the request on both');
      assert.equal(queueOfB, 1, 'the queue is current when the event arrives');
      const requestId = b.pendingApprovals()[0]!.requestId;
      assert.deepEqual(b.resolveApprovals([requestId], 'approved'), { ok: true });
      await until(() => a.pendingApprovals().length === 0, 'the decision reaches the other front end');
      assert.equal(a.resolveApprovals([requestId], 'approved').ok, false, 'already decided');
      assert.equal(await a.idle(sent.ok ? sent.sessionId : ''), 'wrote it');
      await until(() => a.history('session-user__worker__default').length === app.core.history('session-user__worker__default').length, 'the history');
      assert.deepEqual(a.history('session-user__worker__default'), app.core.history('session-user__worker__default'));
      assert.deepEqual(a.sessions().map((s) => [s.id, s.messageCount]), app.core.sessions().map((s) => [s.id, s.messageCount]));
      assert.ok(readsInReaction.length > 0 && readsInReaction.every((n) => Number(n) > 0));
      assert.ok(a.usage().run.calls >= 2);
      assert.deepEqual(a.usage().run, app.core.usage().run);

      // Detach one front end mid-turn: the agent goes on.
      const second = a.send('worker', 'hello again', 'side');
      assert.ok(second.ok);
      await a.shutdown('detach');
      await until(() => app.core.sessions().some((s) => s.id === 'session-user__worker__side'), 'the message sent before detaching');
      assert.equal(await app.core.idle('session-user__worker__side'), 'hello from the worker, streamed in small pieces so a client sees many deltas arrive one after another.');
      assert.equal(await a.closed, 'closed by the client');

      // While nobody is attached, an agent asks for approval.
      const meanwhile = app.core.send('worker', 'write the file', 'meanwhile');
      assert.ok(meanwhile.ok);
      await until(() => app.core.pendingApprovals().length === 1, 'the request while detached');
      // Re-attach: everything that happened meanwhile is there, the pending approval included.
      const { core: c, history } = await attachRemote({ socket });
      cores.push(c);
      assert.deepEqual(c.pendingApprovals(), app.core.pendingApprovals());
      assert.deepEqual(c.history(meanwhile.sessionId), app.core.history(meanwhile.sessionId));
      assert.deepEqual(c.resolveApprovals([c.pendingApprovals()[0]!.requestId], 'approved'), { ok: true });
      assert.equal(await app.core.idle(meanwhile.sessionId), 'wrote it');
      assert.deepEqual(c.history('session-user__worker__side'), app.core.history('session-user__worker__side'));
      assert.deepEqual(c.sessions().map((s) => s.id).sort(), app.core.sessions().map((s) => s.id).sort());
      // The history browser's reads, through the history service beside the remote core.
      const runs = await history.runs();
      assert.ok(runs.some((r) => r.id === app.runId));
      const listed = await history.runSessions(app.runId);
      assert.deepEqual(listed.map((x) => x.id).sort(), app.core.sessions().map((x) => x.id).sort());
      assert.ok(listed.every((x) => x.messageCount === app.core.history(x.id).length), 'the counts of the files on disk');
      const lines = await history.transcript(app.runId, 'session-user__worker__default');
      assert.ok(lines.some((l) => l.text.includes('wrote it')));
      const found = await history.searchHistory(app.runId, 'wrote it');
      assert.ok(found.hits.length > 0);

      // The server stops: attached cores are told.
      const notices: string[] = [];
      c.bus.subscribe('notice', (e) => void notices.push(e.message));
      await server.close('the Legion server is stopping');
      assert.equal(await c.closed, 'the Legion server is stopping');
      assert.match(notices.join('\n'), /the Legion server went away \(the Legion server is stopping\)/);
      assert.deepEqual(c.send('worker', 'x'), { ok: false, error: 'not connected to the Legion server' });
      assert.ok(seenByA.length > 0);
    } finally {
      for (const core of cores) await core.shutdown('test');
      await server.close('test over');
      await app.close('test over');
    }
  });
});
