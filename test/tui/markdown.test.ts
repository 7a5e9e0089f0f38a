import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { markdownLines, PLAIN_MARKDOWN } from '../../components/markdown/markdown-lines';
import { highlightLines, loadHighlighter } from '../../components/markdown/highlight';
import { wrapSpans } from '../../components/text/wrap';
import { cellWidth } from '../../components/text/width';
import { lineText } from '../../components/text/line';
import { sanitize } from '../../components/text/ansi';

test('code is plain until the highlighter is loaded (after the first frame), then highlighted', async () => {
  assert.deepEqual(highlightLines('const x = 1;', 'typescript'), [[{ text: 'const x = 1;', tone: 'code' }]]);
  await loadHighlighter();
  assert.ok(highlightLines('const x = 1;', 'typescript')[0]!.some((s) => s.tone === 'keyword'));
});

const md = [
  '# Title', '', 'Some **bold**, *em* and `code` with a [link](https://x.dev).', '',
  '- one', '- two', '  - nested', '', '1. first', '2. second', '',
  '```ts', 'const x: number = 1; // note', '```', '', '> quoted', '', '---',
].join('\n');

test('markdown: headings, inline styles, lists, code, quotes and rules', async () => {
  await loadHighlighter();
  const lines = markdownLines(md, 60);
  const text = lines.map(lineText);
  assert.equal(text[0], 'Title');
  assert.equal(lines[0]![0]!.bold, true);
  assert.ok(text.includes('Some bold, em and code with a link (https://x.dev).'));
  const para = lines[text.indexOf('Some bold, em and code with a link (https://x.dev).')]!;
  assert.ok(para.some((s) => s.text === 'bold' && s.bold));
  assert.ok(para.some((s) => s.text === 'em' && s.italic));
  assert.ok(para.some((s) => s.text === 'code' && s.tone === 'code'));
  assert.ok(text.includes('• one') && text.includes('  • nested') && text.includes('1. first') && text.includes('2. second'));
  const code = lines.find((l) => lineText(l).includes('const x'))!;
  assert.ok(code.some((s) => s.tone === 'keyword' && s.text === 'const'), 'highlighted');
  assert.ok(code.some((s) => s.tone === 'comment'));
  assert.ok(text.includes('│ quoted'));
  assert.ok(text.some((t) => /^─+$/.test(t)));
});

test('markdown lines never exceed the width; plain glyphs are ASCII', () => {
  for (const width of [10, 23, 40]) {
    for (const line of markdownLines(md + '\n\n' + 'word '.repeat(50) + 'averyveryveryverylongwordthatmustbreak', width)) {
      assert.ok(cellWidth(lineText(line)) <= width, `${width}: "${lineText(line)}"`);
    }
  }
  const plain = markdownLines('- a\n\n> b', 40, PLAIN_MARKDOWN).map(lineText);
  assert.deepEqual(plain, ['- a', '', '> b']);
});

test('highlight: unknown languages stay unstyled; lines are kept', async () => {
  await loadHighlighter();
  assert.deepEqual(highlightLines('a\nb', 'nope').map((l) => l.map((s) => s.text).join('')), ['a', 'b']);
  const py = highlightLines('def f():\n    return "s"', 'python');
  assert.equal(py.length, 2);
  assert.ok(py[0]!.some((s) => s.tone === 'keyword'));
});

test('wrapping: words, hard breaks, hanging indent, wide characters', () => {
  const lines = wrapSpans([{ text: 'aaa bbb ccc\nddd' }], 7, { first: [{ text: '- ' }], rest: [{ text: '  ' }] }).map(lineText);
  assert.deepEqual(lines, ['- aaa ', '  bbb ', '  ccc', '  ddd']);
  const wide = wrapSpans([{ text: '漢字漢字漢字' }], 5).map(lineText);
  for (const l of wide) assert.ok(cellWidth(l) <= 5);
  assert.equal(wide.join(''), '漢字漢字漢字');
});

test('sanitize: tabs become spaces, escape sequences and control characters go', () => {
  assert.equal(sanitize('a\tb\x1b[31mred\x1b[0m\x07\r\n'), 'a    bred\n');
  // C1 controls as UTF-8 code points, which xterm and others act on like their ESC forms: OSC
  // (\u009d: title, OSC 8 links, OSC 52 clipboard), DCS, APC, PM, their terminator ST, CSI.
  assert.equal(sanitize('a\u009d52;c;ZWNobyBoaQ==\u009cb\u0090q\u009c\u009f\u009e\u009b2J\u0085\u0080'), 'a52;c;ZWNobyBoaQ==bq2J');
  assert.equal(sanitize('é ü ¡ ¿ \u00a0'), 'é ü ¡ ¿ \u00a0', 'printable Latin-1 stays');
});

test('wrapping keeps a word whole across styles: `(**Ctrl+Y**).` never breaks after the parenthesis', () => {
  const lines = markdownLines('look at the approval queue (**Ctrl+Y**).', 30).map(lineText);
  assert.deepEqual(lines, ['look at the approval queue ', '(Ctrl+Y).']);
});
