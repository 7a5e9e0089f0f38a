import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBus } from '../../src/events/bus';
import type { EventInput, LegionEvent } from '../../src/events/types';
import { reduce } from '../../components/state/reduce';
import { applyAction } from '../../components/state/actions';
import { initialUiState, type UiState } from '../../components/state/ui-state';
import { open, text, status, assistant, userMessage, sessionIdOf } from '../helpers/fake-core';

/** Stamp inputs into events with a real bus (seq, at, runId), as a ledger would hold them. */
function events(...inputs: EventInput[]): LegionEvent[] {
  const bus = createBus({ runId: 'r1', now: () => new Date('2026-01-01T00:00:00Z') });
  const out: LegionEvent[] = [];
  bus.subscribeAll((e) => out.push(e));
  for (const input of inputs) bus.emit(input);
  return out;
}

const settings = { maxLanes: 4, autoOpenLanes: true };
const replay = (list: readonly LegionEvent[], s0: UiState = initialUiState('r1', settings)): UiState => list.reduce(reduce, s0);
const U = sessionIdOf('user', 'ur-agent');
const S = sessionIdOf('ur-agent', 'scribe', 'files');

test('replaying a ledger builds sessions, lanes, streamed text and finished messages', () => {
  const list = events(
    { type: 'run-start', resumed: false },
    open('user', 'ur-agent'),
    userMessage(U, 'write docs'),
    status(U, 'ur-agent', 'thinking'),
    text(U, 'ur-agent', 'Hel'),
    text(U, 'ur-agent', 'lo'),
  );
  const mid = replay(list);
  assert.deepEqual(mid.lanes, [U]);
  assert.equal(mid.sessions[U]!.streaming, 'Hello');
  assert.equal(mid.sessions[U]!.status, 'thinking');
  assert.equal(mid.sessions[U]!.entries.length, 1);
  const done = replay(events(assistant(U, [{ type: 'text', text: 'Hello' }]), status(U, 'ur-agent', 'idle')), mid);
  assert.equal(done.sessions[U]!.streaming, '', 'the persisted message replaces the streamed text');
  assert.equal(done.sessions[U]!.entries.length, 2);
  assert.equal(done.sessions[U]!.status, 'idle');
  // Pure: the same list gives the same state.
  assert.deepEqual(replay(list), mid);
});

test('a delegate session opens its own lane; beyond maxLanes the oldest idle lane gives way', () => {
  let s = replay(events(open('user', 'ur-agent'), open('ur-agent', 'scribe', 'files')));
  assert.deepEqual(s.lanes, [U, S]);
  assert.equal(s.focus, 0, 'a lane that opens by itself does not take the focus');
  const more = ['a', 'b', 'c'].map((n) => open('ur-agent', 'scribe', n));
  // Keep the focused user lane and `b` busy: the oldest idle other lane gives way.
  s = replay(events(more[0]!, more[1]!, status(sessionIdOf('ur-agent', 'scribe', 'b'), 'scribe', 'thinking'), more[2]!), s);
  assert.equal(s.lanes.length, 4);
  assert.ok(s.lanes.includes(U), 'the focused lane stays');
  assert.ok(s.lanes.includes(sessionIdOf('ur-agent', 'scribe', 'b')), 'a busy lane stays');
  assert.ok(s.lanes.includes(sessionIdOf('ur-agent', 'scribe', 'c')), 'the new session got a lane');
  assert.equal(s.order.length, 5, 'sessions without a lane stay known (switcher)');
});

test('autoOpenLanes false: only the first session gets a lane', () => {
  const s = replay(events(open('user', 'ur-agent'), open('ur-agent', 'scribe', 'files')), initialUiState('r1', { maxLanes: 4, autoOpenLanes: false }));
  assert.deepEqual(s.lanes, [U]);
  assert.ok(s.sessions[S]);
});

test('tool calls: pending → running → ok with summary; rejections and approvals are tracked', () => {
  const use = { type: 'tool_use' as const, id: 't1', name: 'file_write', input: { path: 'a.md', content: 'x' } };
  let s = replay(events(open('user', 'ur-agent'), assistant(U, [use])));
  assert.equal(s.sessions[U]!.tools.t1!.state, 'pending');
  s = replay(events({ type: 'tool-call-start', sessionId: U, participantId: 'ur-agent', toolUseId: 't1', name: 'file_write', input: use.input }), s);
  assert.equal(s.sessions[U]!.tools.t1!.state, 'running');
  s = replay(events({
    type: 'approval-request', requestId: 'apr-1', sessionId: U, participantId: 'ur-agent', chain: ['user', 'ur-agent'], toolUseId: 't1',
    toolName: 'file_write', input: use.input, ruleId: 'ask-writes', approverId: 'user',
  }), s);
  assert.equal(s.sessions[U]!.tools.t1!.state, 'waiting-approval');
  assert.deepEqual(Object.keys(s.pending), ['apr-1']);
  s = replay(events({ type: 'approval-resolve', requestId: 'apr-1', decision: 'rejected', decidedBy: 'user', reason: 'not now' }), s);
  assert.deepEqual(Object.keys(s.pending), []);
  assert.equal(s.sessions[U]!.tools.t1!.state, 'error');
  assert.match(s.sessions[U]!.tools.t1!.summary!, /rejected by user: not now/);
  s = replay(events({ type: 'tool-call-end', sessionId: U, participantId: 'ur-agent', toolUseId: 't1', name: 'file_write', isError: false, summary: 'wrote 1 line' }), s);
  assert.equal(s.sessions[U]!.tools.t1!.summary, 'wrote 1 line');
});

test('a request decided on the web page or in Telegram leaves the queue and the status line says where; a terminal decision says nothing', () => {
  const use = { type: 'tool_use' as const, id: 't1', name: 'file_write', input: { path: 'a.md', content: 'x' } };
  const request = (id: string, toolUseId: string): EventInput => ({
    type: 'approval-request', requestId: id, sessionId: U, participantId: 'ur-agent', chain: ['user', 'ur-agent'], toolUseId,
    toolName: 'file_write', input: use.input, ruleId: 'ask-writes', approverId: 'user',
  });
  let s = replay(events(open('user', 'ur-agent'), assistant(U, [use, { ...use, id: 't2' }, { ...use, id: 't3' }]), request('apr-1', 't1'), request('apr-2', 't2'), request('apr-3', 't3')));
  s = replay(events({ type: 'approval-resolve', requestId: 'apr-1', decision: 'approved', decidedBy: 'user', reason: 'approved by user' }), s);
  assert.equal(s.notice, null);
  s = replay(events({ type: 'approval-resolve', requestId: 'apr-2', decision: 'approved', decidedBy: 'remote:telegram:@ann', reason: 'approved by remote:telegram:@ann' }), s);
  assert.deepEqual(Object.keys(s.pending), ['apr-3']);
  assert.deepEqual(s.notice, { level: 'info', text: 'apr-2 approved in Telegram by @ann' });
  s = replay(events({ type: 'approval-resolve', requestId: 'apr-3', decision: 'rejected', decidedBy: 'remote:web', reason: 'no' }), s);
  assert.equal(s.notice?.text, 'apr-2 approved in Telegram by @ann · apr-3 rejected on the web page');
  assert.match(s.sessions[U]!.tools.t3!.summary!, /rejected by remote:web: no/);
});

test('usage adds up per session and in total; an unknown price is marked', () => {
  const usage = (cost: number | null): EventInput => ({
    type: 'usage', sessionId: U, participantId: 'ur-agent', model: 'm1', inputTokens: 100, outputTokens: 20, cacheReadTokens: 5, cacheWriteTokens: 0, costUsd: cost,
  });
  const s = replay(events(open('user', 'ur-agent'), usage(0.01), usage(null)));
  assert.equal(s.sessions[U]!.tokens, 250);
  assert.equal(s.totals.tokens, 250);
  assert.equal(s.totals.costUsd, 0.01);
  assert.equal(s.totals.costKnown, false);
  assert.equal(s.model, 'm1');
});

test('an interrupted turn drops its partial text; notices go to their session or the status line', () => {
  const s = replay(events(
    open('user', 'ur-agent'), status(U, 'ur-agent', 'thinking'), text(U, 'ur-agent', 'partial'), status(U, 'ur-agent', 'idle'),
    { type: 'notice', level: 'info', message: 'turn interrupted', sessionId: U },
    { type: 'notice', level: 'warn', message: 'config warning' },
  ));
  assert.equal(s.sessions[U]!.streaming, '');
  const last = s.sessions[U]!.entries.at(-1)!;
  assert.equal(last.role, 'notice');
  assert.deepEqual(s.notice, { level: 'warn', text: 'config warning' });
});

test('status-line notices that come before a key are joined at the most severe level; a key clears them', () => {
  const s0 = { ...initialUiState('r1', settings), notice: { level: 'warn' as const, text: 'demo: no API key' } };
  const s = replay(events(
    { type: 'notice', level: 'error', message: 'sandbox: on, but no sandbox can be made' },
    { type: 'notice', level: 'info', message: 'mcp: 1 server started' },
  ), s0);
  assert.deepEqual(s.notice, { level: 'error', text: 'demo: no API key · sandbox: on, but no sandbox can be made · mcp: 1 server started' });
  const cleared = applyAction(s, { type: 'clear-notice' });
  assert.equal(cleared.notice, null);
  const next = replay(events({ type: 'notice', level: 'info', message: 'later' }), cleared);
  assert.deepEqual(next.notice, { level: 'info', text: 'later' });
  const long = replay(events(...Array.from({ length: 40 }, (_, i) => ({ type: 'notice' as const, level: 'warn' as const, message: `notice number ${i} `.padEnd(60, '.') }))));
  assert.ok(long.notice!.text.length <= 1_000 && long.notice!.text.endsWith('notice number 39 '.padEnd(60, '.')) && long.notice!.text.startsWith('…'));
});

test('events of a session never opened create it from its id', () => {
  const s = replay(events(text(S, 'scribe', 'hi')));
  assert.equal(s.sessions[S]!.initiatorId, 'ur-agent');
  assert.equal(s.sessions[S]!.name, 'files');
  assert.equal(s.sessions[S]!.streaming, 'hi');
});

test('UI actions: focus wraps, show-session focuses, drafts and scroll are per session', () => {
  let s = replay(events(open('user', 'ur-agent'), open('ur-agent', 'scribe', 'files')));
  s = applyAction(s, { type: 'focus-lane', delta: -1 });
  assert.equal(s.focus, 1);
  s = applyAction(s, { type: 'focus-lane', delta: 1 });
  assert.equal(s.focus, 0);
  s = applyAction(s, { type: 'set-draft', sessionId: U, draft: { text: 'x', cursor: 1, pastes: [] } });
  assert.equal(s.views[U]!.draft.text, 'x');
  assert.equal(s.views[S], undefined);
  s = applyAction(s, { type: 'show-session', sessionId: S });
  assert.equal(s.focus, 1);
  s = applyAction(s, { type: 'sent', text: 'a' });
  s = applyAction(s, { type: 'sent', text: 'a' });
  assert.deepEqual(s.sent, ['a'], 'the same text twice is kept once');
});

test('resync (an attached core rebuilt from a snapshot): the core\'s sessions, queue and totals replace the old; drafts, open lanes, focus and the unused home lane stay', () => {
  const W = sessionIdOf('user', 'worker');
  const X = sessionIdOf('user', 'worker', 'x');
  const Gone = sessionIdOf('user', 'scout');
  // Before: the home lane (never used: the server does not list it), the worker's lane focused with a draft, scout's lane.
  let before = replay(events(open('user', 'ur-agent'), open('user', 'worker'), userMessage(W, 'old'), open('user', 'scout'), userMessage(Gone, 'x')));
  before = applyAction(applyAction(before, { type: 'focus-index', index: 1 }), { type: 'set-draft', sessionId: W, draft: { text: 'half typed', cursor: 10, pastes: [] } });
  assert.equal(before.lanes[1], W);
  // The core now: the worker's session has more, a new session, a pending request; scout's session is unknown to it.
  const fresh = replay(events(open('user', 'worker'), userMessage(W, 'old'), userMessage(W, 'missed'), open('user', 'worker', 'x')));
  const pending = { requestId: 'apr-9', sessionId: X, participantId: 'worker', chain: ['user', 'worker'], toolUseId: 't', toolName: 'file_write', input: {}, ruleId: null, approverId: 'user', at: 'now' };
  const after = applyAction(before, { type: 'resync', fresh: { ...fresh, pending: { 'apr-9': pending } } });
  assert.deepEqual(after.lanes, [U, W, X], 'the open lanes in their order, the unused home lane kept, the new session added, the unknown one gone');
  assert.equal(after.lanes[after.focus], W, 'the focus stays on the same session');
  assert.equal(after.views[W]?.draft.text, 'half typed');
  assert.equal(after.sessions[W]!.entries.length, 2);
  assert.equal(after.sessions[Gone], undefined);
  assert.deepEqual(Object.keys(after.pending), ['apr-9']);
});
