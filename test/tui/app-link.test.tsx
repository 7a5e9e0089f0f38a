import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderApp, tick } from '../helpers/tui-app';
import { createFakeCore } from '../helpers/fake-core';
import type { SendOutcome } from '../../src/runtime/core-api';

const DOWN = 'the connection to the Legion server was lost (read ECONNRESET): reconnecting… (attempt 3, Ctrl+C to quit)';

test('an attached screen whose server is down: the reconnecting line stays above the status bar (not cleared by keys), the mode says reconnecting, a message typed meanwhile is refused and stays in the composer; back: the line goes, the mode is attached again', async () => {
  const core = createFakeCore({});
  const refusal = 'not connected to the Legion server (reconnecting): nothing was sent; try again once it is back';
  let down = false;
  const send = core.send.bind(core);
  core.send = (...args: Parameters<typeof core.send>): SendOutcome => (down ? { ok: false, error: refusal } : send(...args));
  const t = await renderApp({ core, columns: 160, mode: 'attached' });
  try {
    assert.match(t.frame(), /^legion · run run-test · attached · /m);
    down = true;
    t.store.dispatch({ type: 'link', link: { state: 'reconnecting', attempt: 3, message: DOWN } });
    await t.type('x');
    let f = t.frame();
    assert.ok(f.includes(DOWN), f);
    assert.match(f, /^legion · run run-test · reconnecting · /m);
    // Typed while down: Enter is refused with the core's reason, the text stays in the composer.
    await t.press('backspace');
    await t.type('still here');
    await t.press('enter');
    await tick(5);
    f = t.frame();
    assert.ok(f.includes(refusal), f);
    assert.match(f, /still here/);
    assert.equal(core.calls.send.length, 0, 'nothing reached the core');
    // The next key clears the refusal; the reconnecting line is still there.
    await t.press('left');
    assert.ok(t.frame().includes(DOWN));
    // Back.
    down = false;
    t.store.dispatch({ type: 'link', link: { state: 'connected' } });
    await tick(5);
    f = t.frame();
    assert.ok(!f.includes('reconnecting'), f);
    assert.match(f, /^legion · run run-test · attached · /m);
    await t.press('end', 'enter');
    assert.equal(core.calls.send.length, 1, 'sent once it is back');
  } finally { t.unmount(); }
});

test('given up (another run, a protocol break): the line says so in the error tone and the mode is disconnected', async () => {
  const t = await renderApp({ core: createFakeCore({}), columns: 160, mode: 'attached' });
  try {
    t.store.dispatch({ type: 'link', link: { state: 'gone', message: 'the Legion server is back but now serves run r2, not r1: quit and start `legion` again to attach to it' } });
    await t.type('a');
    const f = t.frame();
    assert.match(f, /now serves run r2, not r1: quit and start `legion` again/);
    assert.match(f, /^legion · run run-test · disconnected · /m);
  } finally { t.unmount(); }
});
