import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { chmod } from 'node:fs/promises';
import { createServer } from 'node:net';
import { checkServerSocket } from '../../../src/serve/discovery';
import { attachRemote, type RemoteCore } from '../../../src/serve/remote-core';
import { BRIEF, UNTIL_DETACHED } from '../../../src/serve/reconnect-policy';
import type { LinkState } from '../../../src/runtime/core-api';
import { startState } from '../../../components/state/home-lane';
import { stateFromCore } from '../../../components/state/from-core';
import { createUiStore } from '../../../components/state/store';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { hostInProcess, setupServeWorkspace } from '../../helpers/serve-workspace';

/**
 * A virtual clock for the reconnection's waits: each wait adds its delay to `elapsed` at once
 * (no real sleep); once `elapsed` reaches `backAfterMs`, waits hold until the test has the
 * server back, so the server is down for that long in the client's eyes.
 */
function virtualClock(backAfterMs: number): { sleep(ms: number): Promise<void>; delays: number[]; elapsed(): number; down(): void; back(): void } {
  const delays: number[] = [];
  let elapsed = 0;
  let down: () => void = () => undefined;
  const isDown = new Promise<void>((r) => { down = r; });
  let back: () => void = () => undefined;
  const isBack = new Promise<void>((r) => { back = r; });
  return {
    delays, elapsed: () => elapsed, down, back,
    async sleep(ms) {
      delays.push(ms);
      elapsed += ms;
      await isDown;
      if (elapsed >= backAfterMs) await isBack;
      else await tick();
    },
  };
}

/** One answer before the server stops: its start's background work (checkpoints) is done, the temp dir's removal does not race it. */
async function answered(core: RemoteCore): Promise<void> {
  const hello = core.send('worker', 'hello');
  assert.ok(hello.ok);
  await core.idle(hello.sessionId);
}

test('an attached TUI core outlives a server restart of 6 s: it says it is reconnecting (attempt n), refuses input and decisions meanwhile, then resumes the same run from the new server\'s snapshot', { timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    let host = await hostInProcess(dir, env);
    const socket = join(dir, '.legion', 'serve.sock');
    const clock = virtualClock(6000);
    const { core } = await attachRemote({ socket, client: 'tui', reconnect: UNTIL_DETACHED, sleep: clock.sleep });
    const settings = { maxLanes: 4, autoOpenLanes: true };
    const store = createUiStore({ core, initial: startState(core, settings, false).state, frameMs: 1 });
    const links: LinkState[] = [];
    const offLink = core.onLink((link) => { links.push(link); store.dispatch({ type: 'link', link }); });
    const offResync = core.onResync(() => store.dispatch({ type: 'resync', fresh: stateFromCore(core, settings, false) }));
    const notices: string[] = [];
    core.bus.subscribe('notice', (e) => void notices.push(e.message));
    try {
      // Before the restart: an answer, and an approval left pending.
      const hello = core.send('worker', 'hello');
      assert.ok(hello.ok);
      await core.idle(hello.sessionId);
      const write = core.send('worker', 'write the file', 'w');
      assert.ok(write.ok);
      await until(() => core.pendingApprovals().length === 1, 'the approval request');
      const requestId = core.pendingApprovals()[0]!.requestId;

      // The server stops (a supervisor's SIGTERM: it says goodbye) and is down 6 s.
      assert.equal(await host.stop('the Legion server is stopping'), 0);
      clock.down();
      await until(() => clock.elapsed() >= 6000, 'six seconds of tries');
      const last = links.at(-1);
      assert.equal(last?.state, 'reconnecting');
      assert.ok(last.state === 'reconnecting' && last.attempt >= 7, `attempt ${JSON.stringify(last)}`);
      assert.match(store.getState().link?.text ?? '', /^the Legion server stopped \(the Legion server is stopping\): reconnecting… \(attempt \d+, Ctrl\+C to quit\)$/);
      assert.ok(!notices.some((n) => /went away|quit and start/.test(n)), notices.join(' | '));
      // Meanwhile: a message is refused (the composer keeps it), so is a decision on the stale queue.
      const refused = core.send('worker', 'typed while down');
      assert.deepEqual(refused, { ok: false, error: 'not connected to the Legion server (reconnecting): nothing was sent; try again once it is back' });
      assert.equal(core.resolveApprovals([requestId], 'approved').ok, false);
      // Capped backoff: doubling from 100 ms to 2 s, never more.
      assert.deepEqual(clock.delays.slice(0, 7), [100, 200, 400, 800, 1600, 2000, 2000]);
      assert.ok(clock.delays.every((d) => d <= 2000));

      // The server is back with the same run: the client reconnects on its own.
      host = await hostInProcess(dir, env);
      clock.back();
      await until(() => notices.some((n) => /is back \(pid \d+, restarted\): everything was rebuilt from its snapshot/.test(n)), `the reconnection: ${notices.join(' | ')}`);
      assert.deepEqual(links.at(-1), { state: 'connected' });
      assert.equal(store.getState().link, null, 'the reconnecting line is gone');
      // The same run: the history before the restart, the approval offered again and decided from here.
      assert.ok(core.history(hello.sessionId).length >= 2);
      await until(() => core.pendingApprovals().length === 1, 'the approval offered again');
      const again = core.pendingApprovals()[0]!.requestId;
      assert.deepEqual(core.resolveApprovals([again], 'approved'), { ok: true });
      assert.equal(await core.idle(write.sessionId), 'wrote it');
      // A message sent after it works, and its events (numbered by the new server) reach the core and the UI.
      const after = core.send('worker', 'after the restart', 'after');
      assert.ok(after.ok, JSON.stringify(after));
      assert.match(await core.idle(after.sessionId), /^hello from the worker/);
      await until(() => core.history(after.sessionId).length === 2, `the answer in the core: ${core.history(after.sessionId).length}`);
      await until(() => (store.getState().sessions[after.sessionId]?.entries.length ?? 0) >= 2, 'the answer in the UI');
    } finally {
      offLink();
      offResync();
      store.dispose();
      await core.shutdown('test');
      await host.stop('test over');
    }
  });
});

test('a client no one watches (legion run\'s policy) still gives up on a stopped server at once', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    const host = await hostInProcess(dir, env);
    const socket = join(dir, '.legion', 'serve.sock');
    const { core } = await attachRemote({ socket, client: 'run', reconnect: BRIEF });
    const notices: string[] = [];
    core.bus.subscribe('notice', (e) => void notices.push(e.message));
    await answered(core);
    await host.stop('the Legion server is stopping');
    assert.equal(await core.closed, 'the Legion server is stopping');
    assert.match(notices.join('\n'), /the Legion server went away \(the Legion server is stopping\): quit and start/);
    await core.shutdown('test');
  });
});

test('while the server is down, each try checks the socket again: a socket planted once the directory is open to others is never connected to', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    const host = await hostInProcess(dir, env);
    const legionDir = join(dir, '.legion');
    const socket = join(legionDir, 'serve.sock');
    const uid = process.getuid?.() ?? 0;
    const links: LinkState[] = [];
    const { core } = await attachRemote({ socket, client: 'tui', reconnect: UNTIL_DETACHED, sleep: () => tick(), checkSocket: () => checkServerSocket(socket, legionDir, uid) });
    core.onLink((link) => void links.push(link));
    let planted = 0;
    const fake = createServer((s) => { planted += 1; s.destroy(); });
    try {
      await answered(core);
      await host.stop('the Legion server is stopping');
      await chmod(legionDir, 0o755);
      await new Promise<void>((r) => fake.listen(socket, r));
      await until(() => links.some((l) => l.state === 'reconnecting' && /not reconnecting to .*serve\.sock: .* is open to other users/.test(l.message)), `the refusal: ${JSON.stringify(links.at(-1))}`);
      const before = links.length;
      await until(() => links.length > before + 20, 'more tries');
      assert.equal(planted, 0, 'the planted socket was connected to');
      // The check is what kept it away: the directory private again, the next try connects.
      await chmod(legionDir, 0o700);
      await until(() => planted > 0, 'a try once the directory is private again');
    } finally {
      await core.shutdown('test');
      await new Promise((r) => fake.close(r));
    }
  });
});

test('the server back with another run (legion serve --new meanwhile): no more tries, the line says which run and what to do, input stays refused', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    let host = await hostInProcess(dir, env);
    const socket = join(dir, '.legion', 'serve.sock');
    const clock = virtualClock(1000);
    const { core } = await attachRemote({ socket, client: 'tui', reconnect: UNTIL_DETACHED, sleep: clock.sleep });
    const links: LinkState[] = [];
    core.onLink((link) => void links.push(link));
    try {
      await answered(core);
      await host.stop('the Legion server is stopping');
      clock.down();
      host = await hostInProcess(dir, env, [['new', true]]);
      clock.back();
      const reason = await core.closed;
      assert.match(reason, /the server now serves another run/);
      const last = links.at(-1);
      assert.equal(last?.state, 'gone');
      assert.match(last.state === 'gone' ? last.message : '', new RegExp(`the Legion server is back but now serves run \\S+, not ${core.runId}: quit and start \`legion\` again to attach to it`));
      const tries = clock.delays.length;
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(clock.delays.length, tries, 'no more tries');
      assert.equal(core.send('worker', 'x').ok, false);
    } finally {
      await core.shutdown('test');
      await host.stop('test over');
    }
  });
});
