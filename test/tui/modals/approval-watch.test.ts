import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { watchApprovals, BELL_GAP_MS } from '../../../components/modals/approval-watch';
import { createUiStore } from '../../../components/state/store';
import { stateFromCore } from '../../../components/state/from-core';
import { draftOf } from '../../../components/composer/draft-edit';
import { createFakeCore, open, sessionIdOf } from '../../helpers/fake-core';
import { SYNC_TIMERS } from '../../helpers/tui-app';
import { request } from './harness';

function setup(options: { bell?: boolean } = {}) {
  const core = createFakeCore();
  const store = createUiStore({ core, initial: stateFromCore(core, { maxLanes: 4, autoOpenLanes: true }, false), frameMs: 0, timers: SYNC_TIMERS });
  const user = core.openSession('ur-agent');
  if (user.ok) store.dispatch({ type: 'show-session', sessionId: user.sessionId });
  core.emit(open('ur-agent', 'scribe', 'notes'));
  const clock = { now: 10_000 };
  let rings = 0;
  const stop = watchApprovals({ bus: core.bus, store, bell: options.bell ?? true, ring: () => { rings += 1; }, now: () => clock.now });
  return { core, store, clock, rings: () => rings, stop, userSession: sessionIdOf('user', 'ur-agent') };
}

test('user lane focused, empty composer: the queue opens by itself, no bell', () => {
  const s = setup();
  s.core.emit(request({ requestId: 'r1' }));
  assert.deepEqual(s.store.getState().modal, { kind: 'approvals', openedByItselfAt: 10_000 });
  assert.equal(s.rings(), 0);
  s.stop();
});

test('an agents-only lane focused: the queue opens and the bell rings', () => {
  const s = setup();
  s.store.dispatch({ type: 'show-session', sessionId: sessionIdOf('ur-agent', 'scribe', 'notes') });
  s.core.emit(request({ requestId: 'r1' }));
  assert.deepEqual(s.store.getState().modal, { kind: 'approvals', openedByItselfAt: 10_000 });
  assert.equal(s.rings(), 1);
  s.stop();
});

test('a draft in the composer: the queue stays shut (no keystroke is taken) and the bell rings', () => {
  const s = setup();
  s.store.dispatch({ type: 'set-draft', sessionId: s.userSession, draft: draftOf('half a sentence') });
  s.core.emit(request({ requestId: 'r1' }));
  assert.equal(s.store.getState().modal, null);
  assert.equal(s.rings(), 1);
  assert.equal(Object.keys(s.store.getState().pending).length, 1);
  s.stop();
});

test('another modal open: it is not replaced; the bell rings', () => {
  const s = setup();
  s.store.dispatch({ type: 'open-modal', modal: { kind: 'switcher' } });
  s.core.emit(request({ requestId: 'r1' }));
  assert.deepEqual(s.store.getState().modal, { kind: 'switcher' });
  assert.equal(s.rings(), 1);
  s.stop();
});

test('a batch rings once; a later request rings again; ui.bell false never rings', () => {
  const s = setup();
  s.store.dispatch({ type: 'set-draft', sessionId: s.userSession, draft: draftOf('x') });
  s.core.emit(request({ requestId: 'r1' }));
  s.core.emit(request({ requestId: 'r2' }));
  assert.equal(s.rings(), 1);
  s.clock.now += BELL_GAP_MS;
  s.core.emit(request({ requestId: 'r3' }));
  assert.equal(s.rings(), 2);
  s.stop();
  const quiet = setup({ bell: false });
  quiet.store.dispatch({ type: 'set-draft', sessionId: quiet.userSession, draft: draftOf('x') });
  quiet.core.emit(request({ requestId: 'r1' }));
  assert.equal(quiet.rings(), 0);
  quiet.stop();
});

test('requests waiting on an agent approver neither open nor ring; after stop nothing happens', () => {
  const s = setup();
  s.store.dispatch({ type: 'show-session', sessionId: sessionIdOf('ur-agent', 'scribe', 'notes') });
  s.core.emit(request({ requestId: 'r1', approverId: 'ur-agent' }));
  assert.equal(s.store.getState().modal, null);
  assert.equal(s.rings(), 0);
  s.stop();
  s.core.emit(request({ requestId: 'r2' }));
  assert.equal(s.store.getState().modal, null);
  assert.equal(s.rings(), 0);
});
