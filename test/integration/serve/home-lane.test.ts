import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { composeApp } from '../../../src/cli/compose';
import { startServer } from '../../../src/serve/server';
import { attachRemote, type RemoteCore } from '../../../src/serve/remote-core';
import { HOME_SESSION_ID, startState } from '../../../components/state/home-lane';
import { createUiStore } from '../../../components/state/store';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { serveContext, setupServeWorkspace } from '../../helpers/serve-workspace';

/**
 * The home lane attached (docs/serve.md#attaching): whatever ran last on the server, a front
 * end that attaches opens on `user → ur-agent · default`, first and focused, though the server
 * tells it of the home session only after the snapshot; lanes that events open later (the
 * home session's own `session-open`, an agent's delegation) never take the focus.
 */
test('attached: after a message to another agent, the state starts on the home lane, first and focused, and events do not move the focus', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    const app = await composeApp(serveContext(dir, env));
    const socket = join(dir, '.legion', 'serve.sock');
    const server = await startServer({ core: app.core, history: app.history, workflows: app.workflows, socketPath: socket, workspace: dir, version: 'test', log: () => undefined, providerLabel: 'faux', demo: false });
    const cores: RemoteCore[] = [];
    try {
      // `legion run --to worker "hello"`: the only session of the run is the worker's.
      const run = (await attachRemote({ socket, client: 'run' })).core;
      cores.push(run);
      const sent = run.send('worker', 'hello');
      assert.ok(sent.ok);
      await run.idle(sent.sessionId);
      assert.deepEqual(app.core.sessions().map((s) => s.id), ['session-user__worker__default']);

      const tui = (await attachRemote({ socket })).core;
      cores.push(tui);
      const { state, problem } = startState(tui, { maxLanes: 4, autoOpenLanes: true }, true);
      assert.equal(problem, null);
      assert.deepEqual(state.lanes, [HOME_SESSION_ID, 'session-user__worker__default'], 'the home lane first');
      assert.equal(state.focus, 0, 'and focused');
      const store = createUiStore({ core: tui, initial: state, frameMs: 1 });
      try {
        // The server's session-open for the home session arrives: nothing moves.
        await until(() => tui.sessions().some((s) => s.id === HOME_SESSION_ID), 'the home session on the server');
        // Another agent's message opens a lane by an event: it does not take the focus.
        const other = run.send('worker', 'hello again', 'side');
        assert.ok(other.ok);
        await until(() => store.getState().lanes.includes('session-user__worker__side'), 'the lane an event opened');
        assert.equal(store.getState().lanes[0], HOME_SESSION_ID);
        assert.equal(store.getState().focus, 0);
        assert.equal(store.getState().lanes.filter((id) => id === HOME_SESSION_ID).length, 1);
      } finally {
        store.dispose();
      }
    } finally {
      for (const c of cores) await c.shutdown('test over');
      await server.close('test over');
      await app.close('test over');
    }
  });
});
