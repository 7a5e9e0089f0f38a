import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderModals, request, type ModalHarness } from './harness';
import { buildKeymap } from '../../../components/keymap';
import { assistant, open, sessionIdOf, status, text } from '../../helpers/fake-core';

const F2 = '\x1bOQ';

async function withApp(fn: (h: ModalHarness) => Promise<void>, options: Parameters<typeof renderModals>[0] = {}): Promise<void> {
  const h = await renderModals({ columns: 110, rows: 34, ...options });
  try { await fn(h); } finally { h.unmount(); }
}

/** The help modal's key column for an action description. */
function helpKeys(frame: string, description: string): string | undefined {
  const line = frame.split('\n').find((l) => l.includes(description));
  return line?.replace(/^│\s*/, '').split(/\s{2,}/)[0];
}

test('help lists the default keymap (F1 opens it, so does ? on an empty composer)', async () => {
  await withApp(async (h) => {
    await h.press('f1');
    const f = h.frame();
    assert.equal(helpKeys(f, 'approval queue'), 'Ctrl+Y');
    assert.equal(helpKeys(f, 'session switcher'), 'Ctrl+P');
    assert.equal(helpKeys(f, 'new named session'), 'Ctrl+N');
    assert.equal(helpKeys(f, 'history browser'), 'Ctrl+O');
    assert.equal(helpKeys(f, 'help (? only'), 'F1, ?');
    await h.press('escape');
    assert.equal(h.store.getState().modal, null);
    await h.type('?');
    assert.equal(h.store.getState().modal?.kind, 'help');
    await h.press('escape');
    // With text in the composer, ? types.
    await h.type('why');
    await h.type('?');
    assert.equal(h.store.getState().modal, null);
    assert.match(h.frame(), /why\?/);
  });
});

test('help shows the effective keymap after keymap: overrides, and the overridden keys work', async () => {
  const overrides = { approvals: 'ctrl+a', help: ['f2'], switcher: ['ctrl+p', 'ctrl+s'], history: 'alt+h' };
  await withApp(async (h) => {
    await h.type(F2);
    const f = h.frame();
    assert.equal(helpKeys(f, 'approval queue'), 'Ctrl+A');
    assert.equal(helpKeys(f, 'session switcher'), 'Ctrl+P, Ctrl+S');
    assert.equal(helpKeys(f, 'history browser'), 'Alt+H');
    assert.equal(helpKeys(f, 'help (? only'), 'F2');
    assert.equal(helpKeys(f, 'new named session'), 'Ctrl+N');
    await h.press('escape');
    // F1 and ? no longer open help: ? types into the composer.
    await h.press('f1');
    assert.equal(h.store.getState().modal, null);
    await h.type('?');
    assert.equal(h.store.getState().modal, null);
    assert.match(h.frame(), /› \?/);
    await h.press('ctrl+u');
    // Ctrl+A opens the queue, Ctrl+Y does nothing now; Ctrl+S opens the switcher; Alt+H the history.
    await h.press('ctrl+y');
    assert.equal(h.store.getState().modal, null);
    await h.press('ctrl+a');
    assert.equal(h.store.getState().modal?.kind, 'approvals');
    await h.press('escape', 'ctrl+s');
    assert.equal(h.store.getState().modal?.kind, 'switcher');
    await h.press('escape');
    await h.type('\x1bh');
    assert.equal(h.store.getState().modal?.kind, 'history');
  }, { keymap: overrides });
});

test('keymap validation: an unknown action or a clash is a clear config error', () => {
  assert.deepEqual(buildKeymap({ approve: 'ctrl+y' }), {
    ok: false, error: 'keymap: unknown action "approve" (actions: send, newline, nextLane, prevLane, newSession, switcher, approvals, history, scrollUp, scrollDown, scrollTop, scrollBottom, interrupt, clear, help, toggleTools, checkpoints, compact)',
  });
  assert.deepEqual(buildKeymap({ approvals: 'ctrl+p' }), { ok: false, error: 'keymap: "ctrl+p" is bound to both "switcher" and "approvals"' });
  assert.deepEqual(buildKeymap({ history: 'ctrl+1' }), { ok: false, error: 'keymap.history: "ctrl+1": a terminal sends Ctrl only with a letter (ctrl+a … ctrl+z)' });
  // Moving a key away first makes it free.
  assert.equal(buildKeymap({ approvals: 'ctrl+p', switcher: 'ctrl+k' }).ok, true);
});

test('every modal closes with Esc; the streams keep reducing behind it', async () => {
  await withApp(async (h) => {
    const id = sessionIdOf('user', 'ur-agent');
    for (const [key, kind] of [['ctrl+y', 'approvals'], ['ctrl+p', 'switcher'], ['ctrl+n', 'new-session'], ['ctrl+o', 'history'], ['f1', 'help']] as const) {
      await h.press(key);
      assert.equal(h.store.getState().modal?.kind, kind, key);
      await h.emit(status(id, 'ur-agent', 'thinking'), text(id, 'ur-agent', `chunk-${kind} `));
      await h.press('escape');
      assert.equal(h.store.getState().modal, null, `${kind} closes with Esc`);
    }
    // Everything streamed while modals were open is there.
    assert.match(h.frame(), /chunk-approvals chunk-switcher chunk-new-session chunk-history chunk-help/);
    await h.emit(assistant(id, [{ type: 'text', text: 'done streaming' }]), status(id, 'ur-agent', 'idle'));
    assert.match(h.frame(), /done streaming/);
  });
});

test('with no modal open, y / n / Y / N / Space are typed into the composer, never decisions', async () => {
  await withApp(async (h) => {
    await h.type('x');
    await h.emit(open('ur-agent', 'scribe', 'notes'), request({ requestId: 'r1' }));
    assert.equal(h.store.getState().modal, null);
    for (const k of ['y', 'n', 'Y', 'N', 'a', ' ', 'y']) await h.type(k);
    assert.deepEqual(h.resolves, []);
    assert.match(h.frame(), /› xynYNa y/);
    // And the modal keys of one modal never act in another: in the switcher, y filters.
    await h.press('ctrl+p');
    await h.type('y');
    assert.deepEqual(h.resolves, []);
    assert.match(h.frame(), /Filter: y/);
  });
});

test('plain mode: the queue draws without box drawing and marks the highlighted row', async () => {
  await withApp(async (h) => {
    await h.emit(open('ur-agent', 'scribe', 'notes'), request({ requestId: 'r1' }), request({ requestId: 'r2', toolName: 'shell', input: { command: 'ls' } }));
    const f = h.frame();
    assert.doesNotMatch(f, /[╭╮╰╯│]/);
    assert.match(f, /user -> ur-agent -> scribe {2}\(2\)/);
    assert.match(f, /> \[ \] file_write notes\/r1\.md/);
    assert.match(f, / {2}\[ \] shell ls/);
  }, { plain: true });
});
