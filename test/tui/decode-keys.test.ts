import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createKeyDecoder, nameOf } from '../../components/input/decode-keys';

const names = (chunks: string[]): string[] => {
  const d = createKeyDecoder();
  return chunks.flatMap((c) => d.feed(c).map((k) => (k.name === 'text' || k.name === 'paste' ? `${k.name}:${k.text}` : k.name)));
};

test('terminal sequences are named like the keymap', () => {
  const cases: [string, string][] = [
    ['\r', 'enter'], ['\n', 'ctrl+j'], ['\t', 'tab'], ['\x1b[Z', 'shift+tab'], ['\x1b', 'escape'], ['\x7f', 'backspace'],
    ['\x03', 'ctrl+c'], ['\x0e', 'ctrl+n'], ['\x10', 'ctrl+p'], ['\x19', 'ctrl+y'], ['\x0f', 'ctrl+o'], ['\x14', 'ctrl+t'],
    ['\x1b[5~', 'pageup'], ['\x1b[6~', 'pagedown'], ['\x1b[H', 'home'], ['\x1b[F', 'end'], ['\x1b[1~', 'home'], ['\x1b[4~', 'end'],
    ['\x1bOH', 'home'], ['\x1bOF', 'end'], ['\x1bOP', 'f1'], ['\x1b[11~', 'f1'], ['\x1b[[A', 'f1'], ['\x1b[A', 'up'], ['\x1b[1;5A', 'ctrl+up'],
    ['\x1b[3~', 'delete'], ['\x1b\r', 'alt+enter'], ['\x1bx', 'alt+x'], ['?', '?'], [' ', 'space'],
  ];
  for (const [seq, name] of cases) assert.deepEqual(names([seq]), [name], JSON.stringify(seq));
  assert.equal(nameOf('\x1b[999~'), null);
});

test('typed runs stay text; a trailing Enter is a key; an inner line break makes a paste', () => {
  assert.deepEqual(names(['hello']), ['text:hello']);
  assert.deepEqual(names(['hello\r']), ['text:hello', 'enter']);
  assert.deepEqual(names(['a\x7f']), ['a', 'backspace']);
  assert.deepEqual(names(['line one\rline two\r']), ['paste:line one\nline two']);
});

test('bracketed paste is one press, also across chunks and with escapes inside', () => {
  assert.deepEqual(names(['\x1b[200~', 'a\r\nb', '\x1b[201~']), ['paste:a\nb']);
  assert.deepEqual(names(['\x1b[200~', 'x', '\x1b[A', 'y', '\x1b[201~', '\r']), ['paste:x\x1b[Ay', 'enter']);
  assert.deepEqual(names(['\x1b[200~', 'tail\x1b[201~z']), ['paste:tail', 'z']);
});
