import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scrollBy, scrollHome, viewport } from '../../components/lanes/viewport';
import type { LineSource } from '../../components/lanes/line-source';
import { lineSource } from '../../components/lanes/line-source';
import { FOLLOW, newSessionView } from '../../components/state/ui-state';
import { lineText, type Line } from '../../components/text/line';
import { createTheme } from '../../components/theme';
import type { Message } from '../../src/model/message';

/** Blocks of 3 lines each ("b<i>.<j>"), counting which blocks were visited. */
function blocks(count: number): LineSource & { visited: Set<number> } {
  const visited = new Set<number>();
  return {
    count,
    visited,
    lines(i) {
      visited.add(i);
      return [0, 1, 2].map((j): Line => [{ text: `b${i}.${j}` }]);
    },
  };
}

const texts = (lines: readonly Line[]): string[] => lines.map(lineText);

test('following shows the tail and visits only the blocks on screen', () => {
  const src = blocks(10_000);
  const v = viewport(src, FOLLOW, 5);
  assert.deepEqual(texts(v.lines), ['b9998.1', 'b9998.2', 'b9999.0', 'b9999.1', 'b9999.2']);
  assert.equal(v.above, true);
  assert.equal(v.below, false);
  assert.ok(src.visited.size <= 3, `visited ${src.visited.size} blocks`);
});

test('page up, page down, home and end move by lines and resume following at the bottom', () => {
  const src = blocks(10_000);
  let pos = scrollBy(src, FOLLOW, 5, -4);
  // The tail's top line is b9998.1 (line 29,995); four lines up is b9997.0.
  assert.deepEqual(pos, { kind: 'anchor', entry: 9997, line: 0 });
  assert.deepEqual(texts(viewport(src, pos, 5).lines), ['b9997.0', 'b9997.1', 'b9997.2', 'b9998.0', 'b9998.1']);
  assert.equal(viewport(src, pos, 5).below, true);
  pos = scrollBy(src, pos, 5, 2);
  assert.deepEqual(texts(viewport(src, pos, 5).lines)[0], 'b9997.2');
  assert.deepEqual(scrollBy(src, pos, 5, 10), FOLLOW, 'reaching the end follows again');
  const home = scrollHome(src, 5);
  assert.deepEqual(texts(viewport(src, home, 5).lines), ['b0.0', 'b0.1', 'b0.2', 'b1.0', 'b1.1']);
  assert.deepEqual(scrollBy(src, home, 5, -3), { kind: 'anchor', entry: 0, line: 0 }, 'clamped at the top');
  assert.ok(src.visited.size < 30, `visited ${src.visited.size} blocks`);
});

test('a transcript shorter than the lane always follows', () => {
  const src = blocks(1);
  assert.deepEqual(scrollBy(src, FOLLOW, 5, -4), FOLLOW);
  assert.deepEqual(scrollHome(src, 5), FOLLOW);
  assert.equal(viewport(src, FOLLOW, 5).lines.length, 3);
});

test('anchors stay put while messages are appended below them', () => {
  const src = blocks(100);
  const pos = scrollBy(src, FOLLOW, 5, -10);
  const before = texts(viewport(src, pos, 5).lines);
  const grown = blocks(150);
  assert.deepEqual(texts(viewport(grown, pos, 5).lines), before);
});

test('a session source: finished text wrapped once per width and cached; the streamed tail last', () => {
  const theme = createTheme({ color: false, plain: false });
  const msg = (role: 'user' | 'assistant', text: string): Message => ({ role, content: [{ type: 'text', text }], at: '' });
  const entries = [msg('user', 'question?'), msg('assistant', '# Answer\n\nsome *text* here')];
  const session = { ...newSessionView('s', 'user', 'ur-agent', 'default', ''), entries, streaming: 'more **stream**' };
  const ctx = { width: 30, expanded: false, glyphs: theme.transcript, highlight: 0 };
  const src = lineSource(session, ctx);
  assert.equal(src.count, 3);
  const all = [0, 1, 2].flatMap((i) => texts(src.lines(i)));
  assert.deepEqual(all, ['› question?', '', 'Answer', '', 'some text here', '', 'more stream']);
  assert.equal(src.lines(1)[1], src.lines(1)[1], 'cached: the same line objects');
  const narrow = lineSource(session, { ...ctx, width: 8 });
  assert.ok(narrow.lines(1).length > 3, 'rewrapped for another width');
});
