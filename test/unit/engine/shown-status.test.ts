import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBus } from '../../../src/events/bus';
import type { EventInput } from '../../../src/events/types';
import { trackShownStatus } from '../../../src/engine/shown-status';

/**
 * A hub's statuses in engine mode (docs/engine.md#streaming-and-the-hub): the hub says
 * `thinking` when it sends a turn, the worker's feed says it again when the turn starts there;
 * the feed says `idle` at the end, and the hub would say it again. What the bus shows already
 * is not shown twice.
 */
const status = (sessionId: string, participantId: string, value: 'idle' | 'thinking' | 'running-tool', detail?: string): EventInput =>
  ({ type: 'agent-status', sessionId, participantId, status: value, ...(detail !== undefined ? { detail } : {}) }) as EventInput;

test('a status the bus shows already is a repeat; another status, detail, agent or session is not', () => {
  const bus = createBus({ runId: 'r1' });
  const shown = trackShownStatus(bus);
  assert.equal(shown.repeats(status('s1', 'builder', 'thinking')), false, 'nothing shown yet');
  bus.emit(status('s1', 'builder', 'thinking'));
  assert.equal(shown.repeats(status('s1', 'builder', 'thinking')), true);
  assert.equal(shown.repeats(status('s1', 'builder', 'running-tool', 'shell')), false);
  assert.equal(shown.repeats(status('s1', 'scribe', 'thinking')), false, 'another agent');
  assert.equal(shown.repeats(status('s2', 'builder', 'thinking')), false, 'another session');
  bus.emit(status('s1', 'builder', 'running-tool', 'shell'));
  assert.equal(shown.repeats(status('s1', 'builder', 'running-tool', 'shell')), true);
  assert.equal(shown.repeats(status('s1', 'builder', 'running-tool', 'grep')), false, 'another detail');
  assert.equal(shown.repeats(status('s1', 'builder', 'running-tool')), false, 'no detail');
  assert.equal(shown.repeats({ type: 'text-delta', sessionId: 's1', participantId: 'builder', text: 'x' } as EventInput), false, 'not a status');
  assert.equal(shown.shows('s1', 'builder', 'idle'), false);
  bus.emit(status('s1', 'builder', 'idle'));
  assert.equal(shown.shows('s1', 'builder', 'idle'), true);
  assert.equal(shown.shows('s2', 'builder', 'idle'), false);
});
