import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderModals, type ModalHarness } from './harness';
import { assistant, open, sessionIdOf, status, userMessage } from '../../helpers/fake-core';
import { filterSessions, matchScore } from '../../../components/modals/switcher-filter';
import { candidates } from '../../../components/modals/NewSession';
import { DEFAULT_PARTICIPANTS } from '../../helpers/fake-core';

async function withApp(fn: (h: ModalHarness) => Promise<void>): Promise<void> {
  const h = await renderModals({ columns: 110, rows: 26 });
  try { await fn(h); } finally { h.unmount(); }
}

const focused = (h: ModalHarness): string | undefined => h.store.getState().lanes[h.store.getState().focus];

/** Five sessions besides user → ur-agent; lanes hold four at most. */
async function sessions(h: ModalHarness): Promise<void> {
  await h.emit(
    open('ur-agent', 'scribe', 'notes'), userMessage(sessionIdOf('ur-agent', 'scribe', 'notes'), 'write notes'),
    open('ur-agent', 'scout', 'web'), status(sessionIdOf('ur-agent', 'scout', 'web'), 'scout', 'thinking'),
    open('ur-agent', 'scribe', 'summary'),
    open('user', 'scout', 'research'), assistant(sessionIdOf('user', 'scout', 'research'), [{ type: 'text', text: 'hi' }]),
    open('scribe', 'scout', 'facts'),
  );
}

test('Ctrl+P lists every session with participants, name, status, activity and lane', async () => {
  await withApp(async (h) => {
    await sessions(h);
    await h.press('ctrl+p');
    const f = h.frame();
    assert.match(f, /Sessions · 6/);
    assert.match(f, /ur-agent → scout · web +thinking +now +0 msgs +lane \d/);
    assert.match(f, /ur-agent → scribe · notes +idle +now +1 msg /);
    assert.match(f, /scribe → scout · facts +idle/);
    assert.match(f, /user → ur-agent · default/);
    // Six sessions, four lanes: at least one is listed without a lane.
    assert.ok(f.split('\n').some((l) => /· (facts|summary|research|web|notes|default) /.test(l) && !/lane \d/.test(l)), f);
  });
});

test('typing filters (substring, then fuzzy); Enter shows the session in a focused lane', async () => {
  await withApp(async (h) => {
    await sessions(h);
    await h.press('ctrl+p');
    await h.type('facts');
    let f = h.frame();
    assert.match(f, /Sessions · 1 of 6/);
    assert.match(f, /Filter: facts/);
    assert.match(f, /▶ scribe → scout · facts/);
    await h.press('enter');
    assert.equal(h.store.getState().modal, null);
    assert.equal(focused(h), sessionIdOf('scribe', 'scout', 'facts'));
    // Fuzzy: "usr scout" finds user → scout · research; Backspace edits the filter.
    await h.press('ctrl+p');
    await h.type('usr scoutx');
    assert.match(h.frame(), /No session matches/);
    await h.press('backspace');
    f = h.frame();
    assert.match(f, /▶ user → scout · research/);
    await h.press('enter');
    assert.equal(focused(h), sessionIdOf('user', 'scout', 'research'));
  });
});

test('↑ ↓ move in the filtered list; Esc closes without changing the lanes', async () => {
  await withApp(async (h) => {
    await sessions(h);
    const before = h.store.getState().lanes;
    await h.press('ctrl+p');
    await h.type('scribe');
    assert.match(h.frame(), /Sessions · 3 of 6/);
    await h.press('down', 'down', 'down', 'up');
    const selected = h.frame().split('\n').find((l) => l.includes('▶'))!;
    assert.match(selected, /scribe/);
    await h.press('escape');
    assert.equal(h.store.getState().modal, null);
    assert.deepEqual(h.store.getState().lanes, before);
    // Letters typed in the switcher never reached the composer.
    assert.equal(Object.values(h.store.getState().views).every((v) => v.draft.text === ''), true);
  });
});

test('Ctrl+N: completion from active agents, Tab to the name, Enter opens user → scribe · notes focused', async () => {
  await withApp(async (h) => {
    await h.press('ctrl+n');
    let f = h.frame();
    assert.match(f, /New session/);
    // Active agents only: the user is not offered.
    assert.match(f, /ur-agent/);
    assert.match(f, /scribe/);
    assert.doesNotMatch(f, /▶ user /);
    await h.type('scr');
    f = h.frame();
    assert.match(f, /Participant +scr/);
    assert.match(f, /▶ scribe/);
    assert.doesNotMatch(f, /resource-agent/);
    await h.press('tab');
    assert.match(h.frame(), /Participant +scribe/);
    await h.type('notes');
    assert.match(h.frame(), /Opens user → scribe · notes/);
    await h.press('enter');
    assert.deepEqual(h.core.calls.openSession.at(-1), { responderId: 'scribe', name: 'notes' });
    assert.equal(h.store.getState().modal, null);
    assert.equal(focused(h), sessionIdOf('user', 'scribe', 'notes'));
    assert.match(h.frame(), /user → scribe · notes/);
    // The new lane takes typing: the composer is the focused lane's.
    await h.type('hello scribe');
    await h.press('enter');
    assert.deepEqual(h.core.calls.send.at(-1), { responderId: 'scribe', text: 'hello scribe', name: 'notes' });
  });
});

test('Ctrl+N: an invalid name or an unknown participant is an inline error; the dialog stays', async () => {
  await withApp(async (h) => {
    await h.press('ctrl+n');
    await h.type('nobody');
    assert.match(h.frame(), /No active agent matches/);
    await h.press('enter');
    assert.match(h.frame(), /no active agent matches "nobody"/);
    assert.equal(h.core.calls.openSession.length, 1); // the harness's own opening of user → ur-agent
    for (let i = 0; i < 6; i++) await h.press('backspace');
    await h.type('scout');
    await h.press('tab');
    await h.type('Bad Name!');
    await h.press('enter');
    assert.match(h.frame(), /invalid session name "Bad Name!"/);
    assert.equal(h.store.getState().modal?.kind, 'new-session');
    assert.equal(h.core.calls.openSession.length, 1);
    // Shift+Tab back, the name field keeps its text; an empty name means "default".
    for (let i = 0; i < 9; i++) await h.press('backspace');
    await h.press('enter');
    assert.deepEqual(h.core.calls.openSession.at(-1), { responderId: 'scout', name: 'default' });
    assert.equal(focused(h), sessionIdOf('user', 'scout', 'default'));
  });
});

test('Ctrl+N: the core refusing is shown inline', async () => {
  await withApp(async (h) => {
    h.core.openSession = () => ({ ok: false, error: 'scribe is retired and takes no messages' });
    await h.press('ctrl+n');
    await h.type('scribe');
    await h.press('enter');
    assert.match(h.frame(), /scribe is retired and takes no messages/);
    assert.equal(h.store.getState().modal?.kind, 'new-session');
  });
});

test('filter and completion helpers', () => {
  assert.equal(matchScore('user scribe notes', 'scribe'), 2);
  assert.equal(matchScore('user scribe notes', 'usn'), 1);
  assert.equal(matchScore('user scribe notes', 'x'), null);
  const s = (id: string, lastActivity: string) => ({ id, initiatorId: id.split('-')[0]!, responderId: id.split('-')[1]!, name: 'default', status: 'idle' as const, lastActivity });
  const ranked = filterSessions([s('a-scribe', '1'), s('b-sxcxrxixbxe', '2'), s('c-scribe', '3')], 'scribe').map((r) => r.item.id);
  assert.deepEqual(ranked, ['c-scribe', 'a-scribe', 'b-sxcxrxixbxe']);
  const retired = [...DEFAULT_PARTICIPANTS.map((p) => (p.id === 'scout' ? { ...p, status: 'retired' as const } : p))];
  assert.deepEqual(candidates(retired, '').map((p) => p.id), ['ur-agent', 'resource-agent', 'scribe']);
  assert.deepEqual(candidates(DEFAULT_PARTICIPANTS, 'sc').map((p) => p.id), ['scout', 'scribe']);
  assert.deepEqual(candidates(DEFAULT_PARTICIPANTS, 'agent').map((p) => p.id), ['resource-agent', 'ur-agent']);
  assert.deepEqual(candidates(DEFAULT_PARTICIPANTS, 'scribe').map((p) => p.id), ['scribe']);
});
