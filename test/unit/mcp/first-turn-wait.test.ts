import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventInput } from '../../../src/events/types';
import { createMcpTurnWait } from '../../../src/mcp/first-turn-wait';
import type { McpServerStatus } from '../../../src/mcp/manager';

/** A manager whose servers' first attempts settle when the test says so. */
function fakeManager(names: readonly string[]) {
  let release!: () => void;
  const settled = new Promise<void>((resolve) => (release = resolve));
  let state: McpServerStatus['state'] = 'stopped';
  let starts = 0;
  return {
    manager: {
      start() {
        starts++;
        if (state === 'stopped') state = 'starting';
      },
      settled: () => settled,
      statuses: () => names.map((name) => ({ name, state, transport: 'stdio', tools: [] })),
    },
    settle() {
      state = 'ready';
      release();
    },
    starts: () => starts,
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('a turn waits until the starting servers have settled, says so once, and later turns do not wait', async () => {
  const fake = fakeManager(['github', 'fs']);
  const events: EventInput[] = [];
  const wait = createMcpTurnWait({ mcp: fake.manager, emit: (e) => events.push(e) });
  let done = false;
  const first = wait().then(() => (done = true));
  const second = wait();
  await tick();
  assert.equal(fake.starts(), 1, 'the servers were started by the turn');
  assert.equal(done, false, 'still waiting while the servers start');
  assert.deepEqual(events, [{ type: 'notice', level: 'info', message: 'waiting for MCP servers github, fs to start before the first turn' }]);
  fake.settle();
  await first;
  await second;
  assert.equal(done, true);
  await wait();
  assert.equal(events.length, 1, 'no second notice');
});

test('a server that never settles delays the turn only up to the cap, with a warning naming it, and only once', async () => {
  const fake = fakeManager(['slow']);
  const events: EventInput[] = [];
  // capMs 30 is safe under load: the server never settles, so only the cap can end the wait.
  const wait = createMcpTurnWait({ mcp: fake.manager, emit: (e) => events.push(e), capMs: 30 });
  await wait();
  assert.deepEqual(events.map((e) => e.type === 'notice' && [e.level, e.message]), [
    ['info', 'waiting for MCP server slow to start before the first turn'],
    ['warn', 'MCP server slow still starting after 0.03 s: this turn goes without its tools'],
  ]);
  let settledAgain = false;
  void wait().then(() => (settledAgain = true));
  await tick();
  assert.equal(settledAgain, true, 'the next turn does not wait again');
  assert.equal(events.length, 2);
});

test('with no server configured nothing is said and nothing waits', async () => {
  const events: EventInput[] = [];
  const wait = createMcpTurnWait({ mcp: { start() {}, settled: () => Promise.resolve(), statuses: () => [] }, emit: (e) => events.push(e) });
  await wait();
  assert.deepEqual(events, []);
});

test('a cancelled turn stops waiting at once; the wait goes on for the other turns', async () => {
  const fake = fakeManager(['slow']);
  const wait = createMcpTurnWait({ mcp: fake.manager, emit: () => undefined });
  const cancelled = new AbortController();
  let cancelledDone = false;
  let otherDone = false;
  void wait(cancelled.signal).then(() => (cancelledDone = true));
  void wait(new AbortController().signal).then(() => (otherDone = true));
  await tick();
  assert.equal(cancelledDone, false);
  cancelled.abort();
  await tick();
  assert.equal(cancelledDone, true, 'the cancelled turn no longer waits');
  assert.equal(otherDone, false, 'the other turn still waits for the server');
  fake.settle();
  await tick();
  await tick();
  assert.equal(otherDone, true);
});
