import '../helpers/own-home';
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

const U = 'session-user__ur-agent__default';
const flat = (frame: string): string => frame.replace(/\s+/g, ' ');

test('the empty home lane shows a welcome: what to type, the help and approval keys, the workspace; gone after the first message', async () => {
  const t = await renderApp({ columns: 120, rows: 30, workspaceRoot: '/home/me/project' });
  try {
    const f = flat(t.frame());
    assert.match(f, /Welcome to Legion\./);
    assert.match(f, /Type what you want done and press Enter\. ur-agent plans it/);
    assert.match(f, /queue opens by itself \(or press Ctrl\+Y\)\. F1 lists every key\./);
    assert.match(f, /Workspace: \/home\/me\/project/);
    assert.doesNotMatch(f, /Demo:/, 'no demo paragraph with a real provider');
    await t.type('hello');
    await t.press('enter');
    await t.emit({ type: 'message-add', sessionId: U, message: said('user', 'hello', 3) });
    assert.doesNotMatch(t.frame(), /Welcome to Legion/);
    assert.match(t.frame(), /› hello/);
  } finally { t.unmount(); }
});

test('in the demo the welcome says what the demo does; rebound keys are the ones named', async () => {
  const t = await renderApp({ demo: true, providerLabel: 'demo', columns: 100, rows: 30, keymap: { help: 'f2', approvals: 'ctrl+b' } });
  try {
    const f = flat(t.frame());
    assert.match(f, /Demo: no API key is set, so the replies are scripted/);
    assert.match(f, /scribe, which writes notes\/demo\.md once you approve the write/);
    assert.match(f, /\(or press Ctrl\+B\)\. F2 lists every key\./);
  } finally { t.unmount(); }
});

test('only the home lane welcomes: another empty lane stays empty', async () => {
  const core = createFakeCore();
  core.seed({ initiatorId: 'user', responderId: 'ur-agent' }, [said('user', 'hi', 1)]);
  core.seed({ initiatorId: 'user', responderId: 'resource-agent' }, []);
  const t = await renderApp({ core });
  try {
    assert.doesNotMatch(t.frame(), /Welcome to Legion/);
  } finally { t.unmount(); }
});
