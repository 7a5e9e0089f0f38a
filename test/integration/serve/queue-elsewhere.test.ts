import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { composeApp } from '../../../src/cli/compose';
import { startServer } from '../../../src/serve/server';
import { attachRemote, type RemoteCore } from '../../../src/serve/remote-core';
import { startState } from '../../../components/state/home-lane';
import { createUiStore } from '../../../components/state/store';
import { watchApprovals } from '../../../components/modals/approval-watch';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { serveContext, setupServeWorkspace } from '../../helpers/serve-workspace';

/**
 * Two front ends attached to one server (docs/modals.md#approval-queue): a request opens A's
 * queue by itself; B decides it; A's queue closes by itself and its status line says where.
 */
test('attached: a queue that opened by itself closes when another front end decides its request, and says so', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    const app = await composeApp(serveContext(dir, env));
    const socket = join(dir, '.legion', 'serve.sock');
    const server = await startServer({ core: app.core, history: app.history, workflows: app.workflows, socketPath: socket, workspace: dir, version: 'test', log: () => undefined });
    const cores: RemoteCore[] = [];
    try {
      const a = (await attachRemote({ socket })).core;
      const b = (await attachRemote({ socket })).core;
      cores.push(a, b);
      const store = createUiStore({ core: a, initial: startState(a, { maxLanes: 4, autoOpenLanes: true }, false).state, frameMs: 1 });
      const unwatch = watchApprovals({ bus: a.bus, store, bell: false, ring: () => undefined, now: () => Date.now() });
      try {
        const sent = a.send('worker', 'write the file');
        assert.ok(sent.ok);
        await until(() => store.getState().modal?.kind === 'approvals', 'the queue to open by itself in A');
        await until(() => b.pendingApprovals().length === 1, 'the request in B');
        const requestId = b.pendingApprovals()[0]!.requestId;
        assert.deepEqual(b.resolveApprovals([requestId], 'approved'), { ok: true });
        await until(() => store.getState().modal === null, "A's queue to close by itself");
        assert.equal(store.getState().flash?.text, `${requestId} approved in another terminal`);
        assert.equal(await app.core.idle(sent.sessionId), 'wrote it');
      } finally {
        unwatch();
        store.dispose();
      }
    } finally {
      for (const c of cores) await c.shutdown('test over');
      await server.close('test over');
      await app.close('test over');
    }
  });
});
