import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventInput, LegionEvent } from '../../src/events/types';
import { reduce } from '../../components/state/reduce';
import { createUiStore, type Timers } from '../../components/state/store';
import { initialUiState, type UiState } from '../../components/state/ui-state';
import { createFakeCore, open, sessionIdOf, status, text, userMessage, assistant } from '../helpers/fake-core';
import { prng } from '../helpers/prng';

const settings = { maxLanes: 4, autoOpenLanes: true };
const U = sessionIdOf('user', 'ur-agent');
const S = sessionIdOf('ur-agent', 'scribe', 'files');
/** A session no `session-open` announced: the reducer creates it from its id. */
const X = sessionIdOf('ur-agent', 'critic', 'late');

/** Timers the test fires by hand: a frame is drawn when `frame()` is called. */
function manualTimers(): Timers & { frame(): void } {
  let pending: (() => void) | null = null;
  let clock = 0;
  return {
    now: () => clock,
    setTimeout: (fn) => { pending = fn; return 1; },
    clearTimeout: () => { pending = null; },
    frame() { clock += 100; const fn = pending; pending = null; fn?.(); },
  };
}

/** A store on a fake core whose reducer calls are counted, and every event the bus delivered. */
function setup() {
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const core = createFakeCore({ now: () => new Date((clock += 7)) });
  const seen: LegionEvent[] = [];
  core.bus.subscribeAll((e) => void seen.push(e));
  const timers = manualTimers();
  const calls = { deltas: 0, all: 0 };
  const initial = initialUiState(core.runId, settings);
  const store = createUiStore({
    core, initial, frameMs: 33, timers,
    reduce: (state, event) => {
      calls.all += 1;
      if (event.type === 'text-delta') calls.deltas += 1;
      return reduce(state, event);
    },
  });
  const replay = (): UiState => seen.reduce(reduce, initial);
  return { core, store, timers, calls, replay };
}

test('a frame of text deltas is one reduction per session, and the state is the one of reducing each delta', () => {
  const { core, store, timers, calls, replay } = setup();
  core.emit(open('user', 'ur-agent'));
  core.emit(status(U, 'ur-agent', 'thinking'));
  timers.frame();
  calls.deltas = 0;
  for (let i = 0; i < 100; i++) core.emit(text(U, 'ur-agent', `w${i} `));
  assert.equal(calls.deltas, 0, 'nothing is reduced before the frame');
  timers.frame();
  assert.equal(calls.deltas, 1, '100 deltas of one session in a frame: one reduction');
  assert.deepEqual(store.getSnapshot(), replay());
  assert.equal(store.getSnapshot().sessions[U]!.streaming, Array.from({ length: 100 }, (_, i) => `w${i} `).join(''));
  assert.equal(store.getSnapshot().sessions[U]!.lastActivity, store.getState().sessions[U]!.lastActivity);
  store.dispose();
});

test('reading the state, a key or another event between deltas sees every delta before it, in order', () => {
  const { core, store, timers, replay } = setup();
  core.emit(open('user', 'ur-agent'));
  core.emit(text(U, 'ur-agent', 'Hel'));
  core.emit(text(U, 'ur-agent', 'lo'));
  assert.equal(store.getState().sessions[U]!.streaming, 'Hello', 'getState joins the waiting deltas');
  assert.equal(store.getSnapshot().sessions[U]?.streaming ?? '', '', 'the screen has not drawn them yet');
  core.emit(text(U, 'ur-agent', ', wor'));
  // An approval mid-stream: reduced at once, after the deltas before it.
  core.emit({
    type: 'approval-request', requestId: 'apr-1', sessionId: U, participantId: 'ur-agent', chain: ['user', 'ur-agent'], toolUseId: 't1',
    toolName: 'file_write', input: { path: 'a' }, ruleId: 'ask-writes', approverId: 'user',
  });
  assert.deepEqual(Object.keys(store.getState().pending), ['apr-1']);
  assert.equal(store.getState().sessions[U]!.streaming, 'Hello, wor');
  core.emit(text(U, 'ur-agent', 'ld'));
  store.dispatch({ type: 'set-draft', sessionId: U, draft: { text: 'x', cursor: 1, pastes: [] } });
  assert.equal(store.getState().sessions[U]!.streaming, 'Hello, world');
  assert.equal(store.getSnapshot().views[U]?.draft.text, 'x', 'a key reaches the screen at once');
  timers.frame();
  assert.deepEqual(store.getSnapshot(), store.getState());
  // The persisted message ends the stream: deltas before it are not appended after it.
  core.emit(text(U, 'ur-agent', '!'));
  core.emit(assistant(U, [{ type: 'text', text: 'Hello, world!' }]));
  timers.frame();
  assert.equal(store.getSnapshot().sessions[U]!.streaming, '');
  assert.deepEqual(stripViews(store.getSnapshot()), stripViews(replay()));
  store.dispose();
});

test('random interleavings of deltas of several sessions (one unannounced) and other events give the state of reducing each event', () => {
  for (let seed = 1; seed <= 40; seed++) {
    const random = prng(seed);
    const { core, store, timers, calls, replay } = setup();
    const inputs: EventInput[] = [];
    const ids = [U, S, X];
    for (let i = 0; i < 300; i++) {
      const r = random();
      const id = ids[Math.floor(random() * ids.length)]!;
      const who = id === U ? 'ur-agent' : id === S ? 'scribe' : 'critic';
      if (r < 0.75) inputs.push(text(id, who, random() < 0.05 ? '\n\n' : String.fromCharCode(97 + Math.floor(random() * 26))));
      else if (r < 0.8) inputs.push(status(id, who, random() < 0.5 ? 'thinking' : 'idle'));
      else if (r < 0.83) inputs.push(assistant(id, [{ type: 'text', text: 'done' }]));
      else if (r < 0.86) inputs.push(userMessage(id, 'more'));
      else if (r < 0.88 && id !== X) inputs.push(id === U ? open('user', 'ur-agent') : open('ur-agent', 'scribe', 'files'));
      else if (r < 0.9) inputs.push({ type: 'notice', level: 'info', message: `n${i}`, sessionId: id });
      else inputs.push({ type: 'frame' } as never); // a frame here
    }
    for (const input of inputs) {
      if ((input as { type: string }).type === 'frame') timers.frame();
      else core.emit(input);
    }
    timers.frame();
    assert.deepEqual(store.getSnapshot(), replay(), `seed ${seed}`);
    assert.ok(calls.deltas < inputs.filter((e) => e.type === 'text-delta').length, `seed ${seed}: deltas were joined`);
    store.dispose();
  }
});

/** The state without `views` (a dispatched key's draft). */
function stripViews(state: UiState): Omit<UiState, 'views'> {
  const { views: _views, ...rest } = state;
  return rest;
}

test('the outline stays through frames of text deltas of known sessions, and follows the snapshot on anything else', () => {
  const { core, store, timers } = setup();
  core.emit(open('user', 'ur-agent'));
  core.emit(status(U, 'ur-agent', 'thinking'));
  timers.frame();
  const outline = store.getOutline();
  assert.equal(outline, store.getSnapshot());
  core.emit(text(U, 'ur-agent', 'Hel'));
  timers.frame();
  core.emit(text(U, 'ur-agent', 'lo'));
  timers.frame();
  assert.equal(store.getOutline(), outline, 'streamed text alone keeps the outline');
  assert.equal(store.getSnapshot().sessions[U]!.streaming, 'Hello');
  // An approval mid-stream reaches the outline in its frame (the App renders the queue badge at once).
  core.emit(text(U, 'ur-agent', ', w'));
  core.emit({
    type: 'approval-request', requestId: 'apr-1', sessionId: U, participantId: 'ur-agent', chain: ['user', 'ur-agent'], toolUseId: 't1',
    toolName: 'file_write', input: { path: 'a' }, ruleId: 'ask-writes', approverId: 'user',
  });
  timers.frame();
  assert.equal(store.getOutline(), store.getSnapshot());
  assert.deepEqual(Object.keys(store.getOutline().pending), ['apr-1']);
  // A key reaches it at once.
  core.emit(text(U, 'ur-agent', 'or'));
  timers.frame();
  assert.notEqual(store.getOutline(), store.getSnapshot());
  store.dispatch({ type: 'set-draft', sessionId: U, draft: { text: 'y', cursor: 1, pastes: [] } });
  assert.equal(store.getOutline(), store.getSnapshot());
  // A delta of a session the outline does not hold (it creates the session): the outline follows.
  core.emit(text(X, 'critic', 'hi'));
  timers.frame();
  assert.equal(store.getOutline(), store.getSnapshot());
  assert.ok(store.getOutline().sessions[X]);
  // With a modal open (the switcher shows every session's age) the outline is the snapshot.
  store.dispatch({ type: 'open-modal', modal: { kind: 'switcher' } });
  core.emit(text(U, 'ur-agent', 'ld'));
  timers.frame();
  assert.equal(store.getOutline(), store.getSnapshot());
  store.dispose();
});
