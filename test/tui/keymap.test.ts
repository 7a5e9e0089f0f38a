import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildKeymap, DEFAULT_KEYMAP, formatKey, normalizeKey } from '../../components/keymap';

test('defaults are the keys of docs/design.md#the-tui', () => {
  const r = buildKeymap();
  assert.ok(r.ok);
  const k = r.keymap;
  const expect: Record<string, string[]> = {
    send: ['enter'], newline: ['ctrl+j'], nextLane: ['tab'], prevLane: ['shift+tab'], newSession: ['ctrl+n'], switcher: ['ctrl+p'],
    approvals: ['ctrl+y'], history: ['ctrl+o'], scrollUp: ['pageup'], scrollDown: ['pagedown'], scrollTop: ['home'], scrollBottom: ['end'],
    interrupt: ['escape'], clear: ['ctrl+c'], help: ['f1', '?'],
  };
  for (const [action, keys] of Object.entries(expect)) assert.deepEqual(k.keysOf(action as never), keys, action);
  assert.equal(DEFAULT_KEYMAP.length, k.entries.length);
});

test('a printable key acts only on an empty composer', () => {
  const r = buildKeymap();
  assert.ok(r.ok);
  assert.equal(r.keymap.match('?', true), 'help');
  assert.equal(r.keymap.match('?', false), null);
  assert.equal(r.keymap.match('f1', false), 'help');
  assert.equal(r.keymap.match('ctrl+n', false), 'newSession');
  assert.equal(r.keymap.match('x', true), null);
});

test('overrides replace an action\'s keys and are normalized', () => {
  const r = buildKeymap({ newSession: 'Ctrl+B', help: ['F2', '?'], history: [] });
  assert.ok(r.ok, r.ok ? '' : r.error);
  assert.deepEqual(r.keymap.keysOf('newSession'), ['ctrl+b']);
  assert.equal(r.keymap.match('ctrl+n', true), null, 'the default key is free again');
  assert.deepEqual(r.keymap.keysOf('help'), ['f2', '?']);
  assert.deepEqual(r.keymap.keysOf('history'), []);
});

test('an unknown action, a clash and an unreadable key are config errors naming them', () => {
  const unknown = buildKeymap({ fly: 'ctrl+f' });
  assert.equal(unknown.ok, false);
  assert.match(!unknown.ok ? unknown.error : '', /keymap: unknown action "fly" \(actions: send, newline/);
  const clash = buildKeymap({ help: 'ctrl+n' });
  assert.equal(clash.ok, false);
  assert.equal(!clash.ok ? clash.error : '', 'keymap: "ctrl+n" is bound to both "newSession" and "help"');
  const bad = buildKeymap({ help: 'ctrl+1' });
  assert.match(!bad.ok ? bad.error : '', /keymap\.help: "ctrl\+1": a terminal sends Ctrl only with a letter/);
  const alias = buildKeymap({ help: 'ctrl+i' });
  assert.match(!alias.ok ? alias.error : '', /same code as tab/);
  const shifted = buildKeymap({ help: 'shift+/' });
  assert.match(!shifted.ok ? shifted.error : '', /write the shifted character itself/);
  const name = buildKeymap({ help: 'hyper+x' });
  assert.match(!name.ok ? name.error : '', /unknown modifier "hyper"/);
});

test('key names normalize and format for display', () => {
  assert.deepEqual(normalizeKey('Esc'), { ok: true, key: 'escape' });
  assert.deepEqual(normalizeKey('shift+a'), { ok: true, key: 'A' });
  assert.deepEqual(normalizeKey('PgUp'), { ok: true, key: 'pageup' });
  assert.deepEqual(normalizeKey('alt+enter'), { ok: true, key: 'alt+enter' });
  assert.equal(formatKey('ctrl+n'), 'Ctrl+N');
  assert.equal(formatKey('shift+tab'), 'Shift+Tab');
  assert.equal(formatKey('pageup'), 'PgUp');
  assert.equal(formatKey('f1'), 'F1');
  assert.equal(formatKey('?'), '?');
  assert.equal(formatKey('escape'), 'Esc');
});
