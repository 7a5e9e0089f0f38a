import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDenialTracker, denialOutcomeOf, DENIAL_LOOP_NOTE, type DenialLoop } from '../../../src/authz/denial-tracker';
import type { DenialTracker as DenialTrackerPort } from '../../../src/runtime/ports';

const S = 'session-ur-agent__scribe__default';

test('the third consecutive denial returns the note and reports the loop once', () => {
  const loops: DenialLoop[] = [];
  const tracker = createDenialTracker({ threshold: 3, onLoop: (l) => loops.push(l) });
  assert.equal(tracker.record(S, 'scribe', 'denied'), null);
  assert.equal(tracker.record(S, 'scribe', 'denied'), null);
  assert.equal(tracker.record(S, 'scribe', 'denied'), DENIAL_LOOP_NOTE);
  assert.match(DENIAL_LOOP_NOTE, /change approach or ask your caller/);
  assert.equal(loops.length, 1);
  assert.equal(loops[0]!.count, 3);
  assert.match(loops[0]!.notice, /scribe had 3 tool calls denied in a row in session-ur-agent__scribe__default/);
  // Not again on the fourth and fifth, again on the sixth.
  assert.equal(tracker.record(S, 'scribe', 'denied'), null);
  assert.equal(tracker.record(S, 'scribe', 'denied'), null);
  assert.equal(tracker.record(S, 'scribe', 'denied'), DENIAL_LOOP_NOTE);
  assert.equal(loops.length, 2);
});

test('an allowed call resets; counts are per session and participant', () => {
  const tracker = createDenialTracker({ threshold: 3 });
  tracker.record(S, 'scribe', 'denied');
  tracker.record(S, 'scribe', 'denied');
  tracker.record(S, 'scribe', 'allowed');
  assert.equal(tracker.count(S, 'scribe'), 0);
  assert.equal(tracker.record(S, 'scribe', 'denied'), null);
  assert.equal(tracker.record(S, 'scribe', 'denied'), null);
  assert.equal(tracker.record('session-user__scribe__default', 'scribe', 'denied'), null, 'other session counts alone');
  assert.equal(tracker.record(S, 'lead', 'denied'), null, 'other participant counts alone');
  assert.equal(tracker.record(S, 'scribe', 'denied'), DENIAL_LOOP_NOTE);
});

test('threshold comes from config (escalation.denialLoopThreshold)', () => {
  const tracker = createDenialTracker({ threshold: 1 });
  assert.equal(tracker.record(S, 'scribe', 'denied'), DENIAL_LOOP_NOTE);
  const defaults = createDenialTracker();
  defaults.record(S, 'a', 'denied');
  defaults.record(S, 'a', 'denied');
  assert.equal(defaults.record(S, 'a', 'denied'), DENIAL_LOOP_NOTE);
});

test('denialOutcomeOf: denies and rejections count, approvals reset, cancels and expiries do not count', () => {
  assert.equal(denialOutcomeOf('deny', 'rule'), 'denied');
  assert.equal(denialOutcomeOf('deny', 'policy'), 'denied');
  assert.equal(denialOutcomeOf('rejected', 'user'), 'denied');
  assert.equal(denialOutcomeOf('rejected', 'agent:lead'), 'denied');
  assert.equal(denialOutcomeOf('rejected', 'headless'), 'denied');
  assert.equal(denialOutcomeOf('rejected', 'cancel'), null);
  assert.equal(denialOutcomeOf('expired', 'cancel'), null);
  assert.equal(denialOutcomeOf('allow', 'rule'), 'allowed');
  assert.equal(denialOutcomeOf('approved', 'llm'), 'allowed');
});

test('fits the runtime DenialTracker port', () => {
  const port: DenialTrackerPort = createDenialTracker();
  assert.equal(port.record(S, 'x', 'allowed'), null);
});
