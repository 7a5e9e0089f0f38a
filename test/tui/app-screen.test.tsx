import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderApp } from '../helpers/tui-app';
import { createFakeCore, open, status, sessionIdOf } from '../helpers/fake-core';
import type { Message } from '../../src/model/message';

const U = sessionIdOf('user', 'ur-agent');
const S = sessionIdOf('ur-agent', 'scribe', 'files');
const at = '2026-01-01T00:00:00.000Z';
const msg = (role: 'user' | 'assistant', text: string): Message => ({ role, content: [{ type: 'text', text }], at });

test('status bar: run, provider, tokens and cost, busy agents, pending approvals badge', async () => {
  const t = await renderApp({ providerLabel: 'anthropic claude-sonnet-4-5', columns: 130 });
  try {
    await t.emit(
      open('ur-agent', 'scribe', 'files'),
      status(U, 'ur-agent', 'running-tool', 'communicator'),
      status(S, 'scribe', 'thinking'),
      { type: 'usage', sessionId: S, participantId: 'scribe', model: 'claude-sonnet-4-5', inputTokens: 10_000, outputTokens: 2_345, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.5 },
      {
        type: 'approval-request', requestId: 'apr-1', sessionId: S, participantId: 'scribe', chain: ['user', 'ur-agent', 'scribe'],
        toolUseId: 't1', toolName: 'file_write', input: { path: 'a' }, ruleId: 'ask-writes', approverId: 'user',
      },
    );
    const bar = t.frame().split('\n').at(-1)!;
    assert.equal(bar.replace(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/u, '⠋'), 'legion · run run-test · anthropic claude-sonnet-4-5 · 12k tok $0.500 · ⠋ busy: ur-agent, scribe · 1 approval pending (Ctrl+Y)');
    await t.resize(80, 24);
    assert.match(t.frame().split('\n').at(-1)!, /^legion · anthropic c… · 12k tok \$0\.500 · . busy: 2 · 1 approval pending \(Ctrl\+Y\)$/);
  } finally { t.unmount(); }
});

test('resize re-lays the screen; 80×24 fits', async () => {
  const t = await renderApp({ columns: 80, rows: 24 });
  try {
    await t.emit(open('ur-agent', 'scribe', 'files'));
    let lines = t.frame().split('\n');
    assert.equal(lines.length, 23);
    assert.ok(lines.every((l) => l.length <= 80));
    assert.match(lines[0]!, /│/, 'two lanes side by side at 80 columns');
    await t.resize(70, 30);
    lines = t.frame().split('\n');
    assert.equal(lines.length, 29);
    assert.doesNotMatch(lines[0]!, /│/, 'stacked when a lane would be under 40 columns');
  } finally { t.unmount(); }
});

test('plain mode: no box drawing, no spinner, ASCII structure, lanes stacked', async () => {
  const t = await renderApp({ plain: true, demo: true });
  try {
    await t.emit(open('ur-agent', 'scribe', 'files'), status(S, 'scribe', 'thinking'),
      { type: 'message-add', sessionId: U, message: { role: 'assistant', content: [{ type: 'text', text: '- item\n\n```\ncode\n```' }, { type: 'tool_use', id: 't', name: 'file_read', input: { path: 'x' } }], at } });
    const f = t.frame();
    assert.doesNotMatch(f, /[─│┌┐└┘╭╮╰╯▶•⚙✓✗○⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏↳→]/u);
    assert.match(f, /^> user -> ur-agent - default {2}idle/m);
    assert.match(f, /^ {2}ur-agent -> scribe - files {2}thinking/m);
    assert.match(f, /^- item$/m);
    assert.match(f, /^tool: file_read x running$/m);
    assert.match(f, /DEMO - no API key/);
  } finally { t.unmount(); }
});

test('NO_COLOR: no colour codes in the frame', async () => {
  const t = await renderApp({ color: false });
  try {
    await t.emit(open('ur-agent', 'scribe', 'files'));
    assert.doesNotMatch(t.rawFrame(), /\x1b\[(3\d|9\d)m/);
    const colored = await renderApp();
    try {
      assert.match(colored.rawFrame(), /\x1b\[3\dm/, 'colours are on by default');
    } finally { colored.unmount(); }
  } finally { t.unmount(); }
});

test('F1 and ? open help with the effective keymap; Esc closes; ? types when the composer has text', async () => {
  const t = await renderApp({ keymap: { newSession: 'ctrl+b' } });
  try {
    await t.press('f1');
    let f = t.frame();
    assert.match(f, /Keys/);
    assert.match(f, /Ctrl\+B\s+new named session/);
    assert.match(f, /F1, \?\s+help/);
    assert.doesNotMatch(f, /Ctrl\+N/);
    await t.type('x');
    assert.equal(t.store.getState().views[U]?.draft.text ?? '', '', 'keys do not reach the composer behind a modal');
    await t.press('esc');
    assert.doesNotMatch(t.frame(), /new named session/);
    await t.type('?');
    assert.match(t.frame(), /new named session/);
    await t.press('f1');
    assert.doesNotMatch(t.frame(), /new named session/, 'the opening key closes it again');
    await t.type('why');
    await t.type('?');
    assert.match(t.frame(), /^› why\?/m);
  } finally { t.unmount(); }
});

test('the modal layer: Ctrl+Y, Ctrl+P, Ctrl+N, Ctrl+O open their modal kinds; the streams go on behind', async () => {
  const t = await renderApp();
  try {
    for (const [key, kind] of [['ctrl+y', 'approvals'], ['ctrl+p', 'switcher'], ['ctrl+n', 'new-session'], ['ctrl+o', 'history']] as const) {
      await t.press(key);
      assert.equal(t.store.getState().modal?.kind, kind);
      await t.emit(status(U, 'ur-agent', 'thinking'));
      await t.press('esc');
      assert.equal(t.store.getState().modal, null);
      assert.deepEqual(t.core.calls.cancel, [], 'Esc closed the modal, it did not interrupt');
      await t.emit(status(U, 'ur-agent', 'idle'));
    }
  } finally { t.unmount(); }
});

test('a resumed run shows its sessions and history; PgUp/PgDn/Home/End scroll the focused lane', async () => {
  const core = createFakeCore();
  const history: Message[] = [];
  for (let i = 0; i < 200; i++) history.push(msg('user', `question ${i}`), msg('assistant', `answer ${i}`));
  core.seed({ initiatorId: 'user', responderId: 'ur-agent' }, history);
  core.seed({ initiatorId: 'ur-agent', responderId: 'scribe', name: 'files' }, [msg('user', 'delegated'), msg('assistant', 'done')]);
  const t = await renderApp({ core, columns: 100, rows: 24 });
  try {
    let f = t.frame();
    assert.match(f, /answer 199/);
    assert.match(f, /│› delegated/, 'the delegate lane is back too');
    assert.doesNotMatch(f, /answer 190/);
    await t.press('pageup');
    f = t.frame();
    assert.doesNotMatch(f, /answer 199/);
    assert.match(f, /↓ End follows/);
    await t.press('home');
    assert.match(t.frame(), /› question 0\s/);
    await t.press('pagedown');
    assert.doesNotMatch(t.frame(), /› question 0\s/);
    await t.press('end');
    assert.match(t.frame(), /answer 199/);
    assert.doesNotMatch(t.frame(), /End follows/);
    // The core's history is live (it already holds a message when message-add arrives): shown once.
    await t.type('one more');
    await t.press('enter');
    assert.equal(t.frame().match(/› one more/g)?.length, 1);
    assert.equal(t.store.getState().sessions[U]!.entries.length, 401);
  } finally { t.unmount(); }
});
