import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderApp, tick, type AppHarness } from '../helpers/tui-app';
import { sessionIdOf, status } from '../helpers/fake-core';

const U = sessionIdOf('user', 'ur-agent');
const Q = sessionIdOf('ur-agent', 'user', 'ask');

async function ask(t: AppHarness, agent: string, question: string, name = 'ask'): Promise<string> {
  const id = t.core.ask(agent, question, name);
  await tick();
  return id;
}

const headerOf = (frame: string, pattern: RegExp): string => frame.split('\n').find((l) => pattern.test(l)) ?? '';

test('a question opens its lane focused; Enter answers it with core.reply (the exact text); the lane is read-only again', async () => {
  const t = await renderApp();
  try {
    await ask(t, 'ur-agent', 'Which colour do you like?');
    let f = t.frame();
    const header = headerOf(f, /ur-agent → user · ask/);
    assert.match(header, /▶ ur-agent → user · ask {2}waiting for your answer/, 'focused, and the header says so');
    assert.doesNotMatch(header, /read-only|[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/, 'writable, and nobody spins while the user is asked');
    assert.match(f, /Which colour do you like\?/);
    assert.match(f, /› {2}answer ur-agent… {2}\(Enter sends your answer\)/);
    assert.doesNotMatch(f, /busy: user/);
    assert.equal(t.bells.count, 0, 'the lane took the focus: no bell');

    await t.type('teal,');
    await t.press('ctrl+j');
    await t.type('please');
    await t.press('enter');
    assert.deepEqual(t.core.calls.reply, [{ sessionId: Q, text: 'teal,\nplease' }]);
    assert.deepEqual(t.core.calls.send, [], 'an answer is not a new message to ur-agent');
    f = t.frame();
    assert.match(headerOf(f, /ur-agent → user · ask/), /▶ ur-agent → user · ask {2}idle.*read-only/);
    assert.match(f, /│teal, please\s*$/m, 'the answer is in the lane');
    assert.match(f, /› {2}read-only: no question of ur-agent is open/);

    await t.type('more');
    assert.match(t.frame(), /read-only: no question of ur-agent is waiting for your answer here\. Tab moves to your lane\./);
    assert.equal(t.store.getState().views[Q]?.draft.text ?? '', '', 'typing is refused');
    await t.press('enter');
    assert.equal(t.core.calls.reply.length, 1, 'Enter in a closed question lane sends nothing');
  } finally { t.unmount(); }
});

test('while you write elsewhere a question does not take the focus: the bell rings and the status bar points to it (Tab)', async () => {
  const t = await renderApp();
  try {
    await t.type('half a thought');
    await ask(t, 'scribe', 'Overwrite notes.md?', 'notes');
    let f = t.frame();
    assert.match(headerOf(f, /user → ur-agent · default/), /▶ user → ur-agent/, 'the focus stays');
    assert.match(f, /^› half a thought/m, 'the draft is untouched');
    assert.match(f, /scribe → user · notes {2}waiting for your answer/, 'the lane opened beside');
    assert.match(f, /^legion · .*scribe asks you \(Tab\)/m);
    assert.equal(t.bells.count, 1);

    await t.press('tab');
    f = t.frame();
    assert.match(f, /▶ scribe → user · notes/);
    assert.doesNotMatch(f, /asks you \(Tab\)/, 'no hint for the focused question');
    await t.type('yes');
    await t.press('enter');
    assert.deepEqual(t.core.calls.reply, [{ sessionId: sessionIdOf('scribe', 'user', 'notes'), text: 'yes' }]);
    await t.press('shift+tab');
    assert.match(t.frame(), /^› half a thought/m, 'the other draft was kept');
  } finally { t.unmount(); }
});

test('an open modal keeps the focus too; with no lane to spare the hint names the switcher; ui.bell off rings nothing', async () => {
  const t = await renderApp({ maxLanes: 1, bell: false });
  try {
    await t.press('f1');
    await ask(t, 'ur-agent', 'Proceed?');
    assert.equal(t.store.getState().modal?.kind, 'help', 'the modal stays open');
    assert.equal(t.bells.count, 0);
    await t.press('escape');
    const f = t.frame();
    assert.match(f, /▶ user → ur-agent · default/);
    assert.deepEqual(t.store.getState().lanes, [U], 'the one lane is yours (no idle lane to give way)');
    assert.match(f, /^↳ ur-agent → user · ask {2}waiting for your answer/m, 'your lane\'s activity row names it');
    assert.match(f, /ur-agent asks you \(Ctrl\+P\)/);
  } finally { t.unmount(); }
});

test('Esc in a question lane dismisses the question (core.cancel); a refused answer keeps the draft and shows why', async () => {
  const t = await renderApp();
  try {
    await ask(t, 'ur-agent', 'First?');
    t.core.reply = (sessionId, text) => {
      t.core.calls.reply.push({ sessionId, text });
      return { ok: false, error: 'no question is waiting for your answer in ' + sessionId };
    };
    await t.type('an answer');
    await t.press('enter');
    assert.match(t.frame(), /no question is waiting for your answer in session-ur-agent__user__ask/);
    assert.match(t.frame(), /^› an answer/m, 'the draft is kept');
    await t.press('ctrl+u', 'escape');
    assert.deepEqual(t.core.calls.cancel, [Q]);
    assert.match(t.frame(), /dismissing ur-agent's question…/);
    await t.emit(status(Q, 'user', 'idle'));
    assert.match(headerOf(t.frame(), /ur-agent → user · ask/), /idle.*read-only/);
    assert.equal(t.store.getState().sessions[U]?.status, 'idle');
  } finally { t.unmount(); }
});

test('a second question in the same lane after an answer keeps the lane writable and focused', async () => {
  const t = await renderApp();
  try {
    await ask(t, 'ur-agent', 'One?');
    await t.type('1');
    await t.press('enter');
    await ask(t, 'ur-agent', 'Two?');
    assert.match(headerOf(t.frame(), /ur-agent → user · ask/), /▶ ur-agent → user · ask {2}waiting for your answer/);
    await t.type('2');
    await t.press('enter');
    assert.deepEqual(t.core.calls.reply.map((c) => c.text), ['1', '2']);
  } finally { t.unmount(); }
});
