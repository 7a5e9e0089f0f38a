import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as e from '../../components/composer/draft-edit';
import { completeMention } from '../../components/composer/complete';
import { composerLines } from '../../components/composer/composer-lines';
import { lineText } from '../../components/text/line';

test('editing: insert, move, backspace, delete, kill and word delete', () => {
  let d = e.insertText(e.EMPTY_DRAFT, 'hello world');
  d = e.moveLeft(e.moveLeft(d));
  d = e.insertText(d, 'X');
  assert.equal(d.text, 'hello worXld');
  d = e.backspace(d);
  d = e.deleteForward(d);
  assert.equal(d.text, 'hello word');
  d = e.lineEnd(d);
  d = e.deleteWordBack(d);
  assert.equal(d.text, 'hello ');
  d = e.lineStart(d);
  d = e.killToLineEnd(d);
  assert.equal(d.text, '');
});

test('multi-line: vertical moves keep the column; null at the edges', () => {
  const d = e.draftOf('abc\nde\nfghij');
  const up = e.moveVertical(d, -1)!;
  assert.equal(up.cursor, 6, 'end of "de" (column clamped)');
  assert.equal(e.moveVertical(e.moveVertical(up, -1)!, -1), null);
  assert.equal(e.moveVertical(d, 1), null);
});

test('a large paste becomes a placeholder that expands when sent and deletes as one', () => {
  const big = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
  let d = e.insertText(e.EMPTY_DRAFT, 'see: ');
  d = e.insertPaste(d, big);
  assert.equal(d.text, 'see: [pasted #1: 40 lines]');
  assert.equal(e.expandDraft(d), `see: ${big}`);
  assert.equal(e.backspace(d).text, 'see: ');
  const small = e.insertPaste(e.EMPTY_DRAFT, 'a\nb');
  assert.equal(small.text, 'a\nb');
});

test('@completion: one match completes with a space; several complete the common prefix', () => {
  const ids = ['scribe', 'scout', 'ur-agent'];
  const one = completeMention(e.draftOf('ask @u'), ids)!;
  assert.equal(one.draft.text, 'ask @ur-agent ');
  const many = completeMention(e.draftOf('@s'), ids)!;
  assert.equal(many.draft.text, '@sc');
  assert.deepEqual(many.options, ['scout', 'scribe']);
  assert.equal(completeMention(e.draftOf('mail a@b'), ids), null, 'not a mention inside a word');
  assert.equal(completeMention(e.draftOf('@zz'), ids), null);
});

test('composer rows wrap and keep the cursor row visible', () => {
  const d = e.draftOf('0123456789abcdefghij\nxyz');
  const v = composerLines(d, 12, 2, '> ', true);
  assert.equal(v.totalRows, 3);
  assert.deepEqual(v.lines.map(lineText), ['  abcdefghij', '  xyz ']);
  const top = composerLines({ ...d, cursor: 0 }, 12, 2, '> ', true);
  assert.equal(lineText(top.lines[0]!), '> 0123456789');
});
