import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentSchema } from '../../../src/collective/participant';
import { createBus } from '../../../src/events/bus';
import type { EventInput, EventOf, LegionEvent } from '../../../src/events/types';
import { NO_SECRETS } from '../../../src/authz/scrub';
import { createJournal } from '../../../src/runtime/journal';
import type { TurnDeps } from '../../../src/runtime/agent-loop';
import { SessionSlot, type Turn, type TurnOutcome } from '../../../src/runtime/turn';
import type { Message } from '../../../src/model/message';
import type { SessionHandle } from '../../../src/session/types';
import type { EngineHub } from '../../../src/engine/hub';
import { engineTurns, type EngineTurns } from '../../../src/engine/hub-turn';

/**
 * A hub's statuses in engine mode (docs/engine.md#streaming-and-the-hub): the hub says `thinking`
 * when it sends a turn and `idle` or `error` when it ends; the worker's feed says every change,
 * its own `thinking` at the start and `idle` at the end among them. Both go through the journal's
 * `setStatus` on the session's slot: each change reaches the bus once, and the slot shows what
 * the worker does.
 */
const SESSION = 'session-user__builder__default';
const status = (value: 'idle' | 'thinking' | 'running-tool' | 'error', detail?: string, sessionId = SESSION, participantId = 'builder'): EventInput =>
  ({ type: 'agent-status', sessionId, participantId, status: value, ...(detail !== undefined ? { detail } : {}) }) as EventInput;

function setup(worker: (feed: (event: EventInput) => void, slot: SessionSlot) => Promise<TurnOutcome>) {
  const bus = createBus({ runId: 'r1' });
  const events: LegionEvent[] = [];
  bus.subscribeAll((event) => void events.push(event));
  const journal = createJournal({ bus, scrub: NO_SECRETS, clock: () => new Date('2026-11-28T10:00:00Z') });
  const messages: Message[] = [];
  const session: SessionHandle = {
    id: SESSION, key: { initiatorId: 'user', responderId: 'builder', name: 'default' },
    messages: () => messages, append: (message) => void messages.push(message), lastActivity: () => '',
    contextRecords: () => [], appendContext: () => undefined,
  };
  const slot = new SessionSlot(session);
  const agent = agentSchema().parse({ id: 'builder', name: 'Builder', kind: 'agent', systemPrompt: 'build' });
  const turn: Turn = {
    id: 1, slot, session, agent, chain: ['user', 'builder'], sessionChain: [SESSION], controller: new AbortController(),
    delegations: new Set(), delivered: new Set(), wakers: new Set(), finished: false,
  };
  // What compose does with a worker's event: the hub's turns take their statuses, the bus gets the rest.
  const feed = (event: EventInput): void => { if (!turns.fromFeed(event)) bus.emit(event); };
  const hub: Pick<EngineHub, 'runTurn'> = { runTurn: () => worker(feed, slot) };
  const turns: EngineTurns = engineTurns(hub, 'r1', { since: () => [] });
  const deps = { setStatus: journal.setStatus, notice: journal.notice } as Partial<TurnDeps> as TurnDeps;
  return {
    events, slot, feed, turns,
    run: () => turns.run(turn, { kind: 'message', text: 'build it' }, deps),
    statuses: () => events.filter((e): e is EventOf<'agent-status'> => e.type === 'agent-status').map((e) => `${e.status}${e.detail ? ` ${e.detail}` : ''}`),
  };
}

test('a turn sent to a worker: each status change reaches the bus once, and the slot shows the worker\'s', async () => {
  const seen: string[] = [];
  const t = setup(async (feed, slot) => {
    feed(status('thinking'));
    feed(status('running-tool', 'shell'));
    seen.push(`${slot.status} ${slot.statusDetail}`);
    feed(status('thinking'));
    feed(status('idle'));
    return { kind: 'done', text: 'built' };
  });
  assert.deepEqual(await t.run(), { kind: 'done', text: 'built' });
  assert.deepEqual(t.statuses(), ['thinking', 'running-tool shell', 'thinking', 'idle']);
  assert.deepEqual(seen, ['running-tool shell'], 'the hub\'s slot follows the worker mid-turn');
  assert.equal(t.slot.status, 'idle');
});

test('the engine answers before the worker\'s feed says idle: the late idle is not shown again', async () => {
  const t = setup(async (feed) => {
    feed(status('thinking'));
    return { kind: 'done', text: 'built' };
  });
  await t.run();
  t.feed(status('idle'));
  assert.deepEqual(t.statuses(), ['thinking', 'idle']);
});

test('a failed turn: the error once, also when the worker said it first', async () => {
  const t = setup(async (feed) => {
    feed(status('error', 'the model failed'));
    return { kind: 'failed', error: 'the model failed' };
  });
  await t.run();
  assert.deepEqual(t.statuses(), ['thinking', 'error the model failed']);
});

test('what is not a status of a session the hub sent a turn for is left to the caller', async () => {
  const t = setup(async () => ({ kind: 'done', text: '' }));
  assert.equal(t.turns.fromFeed(status('thinking')), false, 'no turn sent for the session yet');
  await t.run();
  assert.equal(t.turns.fromFeed(status('thinking', undefined, 'session-builder__scribe__default', 'scribe')), false, 'a session the worker runs on its own (a delegation)');
  assert.equal(t.turns.fromFeed(status('thinking', undefined, SESSION, 'scribe')), false, 'another participant than the session\'s responder');
  assert.equal(t.turns.fromFeed({ type: 'text-delta', sessionId: SESSION, participantId: 'builder', text: 'x' } as EventInput), false, 'not a status');
  assert.equal(t.turns.fromFeed(status('running-tool', 'shell')), true);
  assert.equal(t.slot.status, 'running-tool');
});
