import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderApp } from '../helpers/tui-app';
import { open, status, text, sessionIdOf } from '../helpers/fake-core';

const U = sessionIdOf('user', 'ur-agent');
const S = sessionIdOf('ur-agent', 'scribe', 'files');

test('Enter sends the draft to the lane\'s responder and clears it; Ctrl+J makes a new line', async () => {
  const t = await renderApp();
  try {
    await t.type('first line');
    await t.press('ctrl+j');
    await t.type('second');
    assert.match(t.frame(), /^› first line\s*$/m);
    assert.match(t.frame(), /^ {2}second\s*$/m);
    await t.press('enter');
    assert.deepEqual(t.core.calls.send, [{ responderId: 'ur-agent', text: 'first line\nsecond', name: 'default' }]);
    assert.match(t.frame(), /› {2}message ur-agent…/, 'composer cleared');
    assert.match(t.frame(), /^› first line\s*$/m, 'the message is in the lane');
  } finally { t.unmount(); }
});

test('↑ on an empty composer recalls sent messages, ↓ goes back to empty', async () => {
  const t = await renderApp();
  try {
    for (const m of ['one', 'two']) { await t.type(m); await t.press('enter'); }
    await t.press('up');
    assert.match(t.frame(), /^› two \s*$/m);
    await t.press('up');
    assert.match(t.frame(), /^› one \s*$/m);
    await t.press('down');
    assert.match(t.frame(), /^› two \s*$/m);
    await t.press('down');
    assert.match(t.frame(), /› {2}message ur-agent…/);
  } finally { t.unmount(); }
});

test('editing keys: backspace, arrows, Ctrl+U', async () => {
  const t = await renderApp();
  try {
    await t.type('helo');
    await t.press('left', 'backspace');
    await t.type('ll');
    assert.match(t.frame(), /^› hello\s*$/m);
    await t.press('ctrl+u');
    assert.match(t.frame(), /^› o\s*$/m, 'Ctrl+U deletes up to the cursor');
    await t.press('ctrl+e', 'ctrl+u');
    assert.match(t.frame(), /› {2}message ur-agent…/);
  } finally { t.unmount(); }
});

test('a large paste shows as a summary and is sent whole', async () => {
  const t = await renderApp();
  try {
    const big = Array.from({ length: 30 }, (_, i) => `row ${i}`).join('\n');
    await t.type('look: ');
    await t.paste(big);
    assert.match(t.frame(), /^› look: \[pasted #1: 30 lines\]/m);
    await t.press('enter');
    assert.equal(t.core.calls.send[0]!.text, `look: ${big}`);
  } finally { t.unmount(); }
});

test('@ completion with Tab; Tab without a mention moves to the next lane', async () => {
  const t = await renderApp();
  try {
    await t.type('ask @scr');
    await t.press('tab');
    assert.match(t.frame(), /^› ask @scribe \s*$/m);
    await t.type('and @sc');
    await t.press('tab');
    assert.match(t.frame(), /^@scout @scribe$/m, 'the options are listed');
    await t.emit(open('ur-agent', 'scribe', 'files'));
    await t.press('ctrl+u', 'tab');
    assert.equal(t.store.getState().focus, 1);
  } finally { t.unmount(); }
});

test('sending to a busy session queues and says so; a refused send keeps the draft', async () => {
  const t = await renderApp();
  try {
    await t.emit(status(U, 'ur-agent', 'thinking'));
    await t.type('later please');
    await t.press('enter');
    assert.match(t.frame(), /queued: ur-agent is busy; your message goes when its turn ends/);
    t.core.sendError = 'ur-agent is retired and takes no messages';
    await t.type('again');
    await t.press('enter');
    assert.match(t.frame(), /ur-agent is retired and takes no messages/);
    assert.match(t.frame(), /^› again/m);
  } finally { t.unmount(); }
});

test('agent-to-agent lanes are read-only: typing is refused with a hint; Esc interrupts them', async () => {
  const t = await renderApp();
  try {
    await t.emit(open('ur-agent', 'scribe', 'files'), status(S, 'scribe', 'thinking'), text(S, 'scribe', 'working'));
    await t.press('tab');
    await t.type('x');
    assert.match(t.frame(), /read-only: ur-agent → scribe is between agents\. Esc interrupts, Tab moves to your lane\./);
    assert.equal(t.store.getState().views[S]?.draft.text ?? '', '');
    await t.press('enter');
    assert.equal(t.core.calls.send.length, 0);
    await t.press('esc');
    assert.deepEqual(t.core.calls.cancel, [S]);
    assert.match(t.frame(), /interrupting scribe…/);
  } finally { t.unmount(); }
});

test('Esc with nothing running says so and cancels nothing', async () => {
  const t = await renderApp();
  try {
    await t.press('esc');
    assert.deepEqual(t.core.calls.cancel, []);
    assert.match(t.frame(), /nothing to interrupt in this lane/);
  } finally { t.unmount(); }
});

test('Ctrl+C clears the composer; twice within 2 s quits, later it only arms again', async () => {
  const t = await renderApp();
  try {
    await t.type('draft');
    await t.press('ctrl+c');
    assert.match(t.frame(), /› {2}message ur-agent…/);
    assert.match(t.frame(), /press Ctrl\+C again to quit/);
    t.clock.now += 2500;
    await t.press('ctrl+c');
    assert.equal(t.quits, 0, 'too late: armed again');
    t.clock.now += 1500;
    await t.press('ctrl+c');
    assert.equal(t.quits, 1);
  } finally { t.unmount(); }
});

test('each lane keeps its own draft', async () => {
  const t = await renderApp();
  try {
    await t.core.openSession('scribe', 'notes');
    await t.type('for ur-agent');
    await t.press('tab');
    await t.type('for scribe');
    await t.press('shift+tab');
    assert.match(t.frame(), /^› for ur-agent/m);
    await t.press('tab', 'enter');
    assert.deepEqual(t.core.calls.send.at(-1), { responderId: 'scribe', text: 'for scribe', name: 'notes' });
  } finally { t.unmount(); }
});
