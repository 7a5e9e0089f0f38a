import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderApp } from '../helpers/tui-app';
import { createFakeCore } from '../helpers/fake-core';
import type { Message } from '../../src/model/message';

/**
 * The home lane (docs/design.md#participants-sessions-runs): `user → ur-agent · default` is the
 * first lane and has the focus at start, even when the latest activity was elsewhere and the
 * home session has no messages.
 */
const at = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const said = (role: Message['role'], text: string, second: number): Message => ({ role, content: [{ type: 'text', text }], at: at(second) });

test('after a run with resource-agent only, the TUI opens on the empty home lane, focused, and typing goes to ur-agent', async () => {
  const core = createFakeCore();
  core.seed({ initiatorId: 'user', responderId: 'resource-agent' }, [said('user', 'make a scribe', 1), said('assistant', 'spawned scribe', 2)]);
  const t = await renderApp({ core, columns: 120, rows: 30 });
  try {
    const f = t.frame();
    const lines = f.split('\n');
    const home = lines.findIndex((l) => /user → ur-agent · default/.test(l));
    const other = lines.findIndex((l) => /user → resource-agent · default/.test(l));
    assert.ok(home !== -1, f);
    assert.ok(other !== -1, 'the other lane follows');
    assert.match(lines[home]!, /▶ user → ur-agent · default/, 'the home lane has the focus');
    assert.ok(home < other || lines[home]!.indexOf('ur-agent') < lines[home]!.indexOf('resource-agent'), 'home lane first');
    assert.doesNotMatch(f, /▶ user → resource-agent/);
    await t.type('hello');
    await t.press('enter');
    assert.deepEqual(core.calls.send, [{ responderId: 'ur-agent', text: 'hello', name: 'default' }]);
  } finally { t.unmount(); }
});

test('the home lane comes first even when four other lanes are more recent', async () => {
  const core = createFakeCore();
  core.seed({ initiatorId: 'user', responderId: 'ur-agent' }, [said('user', 'old', 1)]);
  for (const [i, name] of ['a', 'b', 'c', 'd'].entries()) {
    core.seed({ initiatorId: 'user', responderId: 'resource-agent', name }, [said('user', name, 10 + i)]);
  }
  const t = await renderApp({ core, maxLanes: 4 });
  try {
    assert.equal(t.store.getState().lanes[0], 'session-user__ur-agent__default');
    assert.equal(t.store.getState().focus, 0);
    assert.equal(t.store.getState().lanes.length, 4);
  } finally { t.unmount(); }
});
