import '../helpers/own-home';
/**
 * The streamed tail is rendered incrementally (components/lanes/paragraph-tail.ts): completed
 * lines of the growing paragraph are kept and only its growing line is lexed and wrapped. These
 * tests stream long texts delta by delta and require every frame to be what rendering the same
 * text from scratch gives, byte for byte.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderApp } from '../helpers/tui-app';
import { sessionIdOf, text, userMessage } from '../helpers/fake-core';
import { prng } from '../helpers/prng';
import { replayText } from '../helpers/stream-replay';
import { markdownLines } from '../../components/markdown/markdown-lines';
import { sanitize } from '../../components/text/ansi';
import { lineText } from '../../components/text/line';
import { newParagraphTail, paragraphTailLines, plainSpans } from '../../components/lanes/paragraph-tail';
import { paragraphSpans } from '../../components/markdown/markdown-lines';

const U = sessionIdOf('user', 'ur-agent');

const WORDS = ['alpha', 'beta', 'gamma', 'the', 'a', 'of', 'delta', 'supercalifragilisticexpialidocious', '界面',
  '`code`', '`a b`', '**bold**', '**two words**', '*em*', '_u_', '~~del~~', '&amp;', 'end.', '1984'];
/** Things a paragraph's lines can hold that must defeat the incremental path (or render the same). */
const HOSTILE = ['**open', 'close**', '`tick', '[link](https://x.dev)', '<b>', 'a | b', '\\', '  ', '\t', '\x1b[31m', '*', '_', 'www.x.dev', '[ref]', 'snake_case', 'x*y', '42.'];
const LINE_STARTS = ['', '', '', '', '- ', '1. ', '# ', '> ', '---', '===', '```', '    ', '2026) ', '|', '<div>', ' ', '12 '];

/** A long message: mostly plain multi-line paragraphs (the fast path), with every hazard mixed in. */
function message(seed: number, length: number, hostility: number): string {
  const rnd = prng(seed);
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  let out = '';
  while (out.length < length) {
    const start = rnd() < hostility ? pick(LINE_STARTS) : '';
    const words: string[] = [];
    const n = 1 + Math.floor(rnd() * 14);
    for (let i = 0; i < n; i++) words.push(rnd() < hostility / 3 ? pick(HOSTILE) : pick(WORDS));
    out += start + words.join(' ');
    const r = rnd();
    out += rnd() < hostility / 4 ? '  \n' : r < 0.7 ? '\n' : r < 0.95 ? '\n\n' : '\n\n\n';
  }
  return out;
}

/** Random delta sizes, as a model streams (1 to 9 characters). */
function deltas(seed: number, body: string): string[] {
  const rnd = prng(seed ^ 0x9e3779b9);
  const out: string[] = [];
  for (let i = 0; i < body.length;) {
    const n = 1 + Math.floor(rnd() * 9);
    out.push(body.slice(i, i + n));
    i += n;
  }
  return out;
}

test('paragraph tail: every prefix of a streamed paragraph gives exactly markdownLines of it', () => {
  let fast = 0;
  let fastPlain = 0;
  let frames = 0;
  let framesPlain = 0;
  for (const [seed, hostility] of [[1, 0], [2, 0.1], [3, 0.3], [4, 0.6], [5, 0.05]] as const) {
    // One paragraph region (no blank line): the part after the stable cut.
    const body = message(seed, 1800, hostility).replace(/\n{2,}/g, '\n');
    for (const width of [4, 9, 23, 61]) {
      const state = newParagraphTail();
      let streamed = '';
      for (const d of deltas(seed + width, body)) {
        streamed += d;
        frames += 1;
        if (hostility === 0) framesPlain += 1;
        const got = paragraphTailLines(state, streamed, width);
        if (got === null) continue;
        fast += 1;
        if (hostility === 0) fastPlain += 1;
        const want = markdownLines(sanitize(streamed), width);
        assert.deepEqual(got.map(lineText), want.map(lineText), `seed ${seed} width ${width} after ${streamed.length} chars`);
        assert.deepEqual(got, want, `styles: seed ${seed} width ${width} after ${streamed.length} chars`);
      }
    }
  }
  // Not vacuous: a plain paragraph takes the incremental path on most frames (not where its
  // growing line starts with something else), and hostile ones on some.
  assert.ok(fastPlain > framesPlain * 0.8, `${fastPlain} of ${framesPlain} plain frames incremental`);
  assert.ok(fast > fastPlain, `${fast - fastPlain} hostile frames incremental`);
});

test('paragraph tail: the stream bench text (lines cut mid-word and mid-bold, trailing spaces) is incremental and exact', () => {
  const body = replayText(3000);
  for (const width of [37, 120, 199]) {
    const state = newParagraphTail();
    let fast = 0;
    for (let n = 1; n <= body.length; n++) {
      const got = paragraphTailLines(state, body.slice(0, n), width);
      if (got === null) continue;
      fast += 1;
      if (n % 7 === 0 || n === body.length) assert.deepEqual(got, markdownLines(sanitize(body.slice(0, n)), width), `width ${width} after ${n}`);
    }
    assert.ok(fast > body.length * 0.9, `${fast} of ${body.length} frames incremental`);
    // Committed as it goes: at the end only the last two or three source lines (≤ 1,200 characters) are held.
    const total = markdownLines(sanitize(body), width).length;
    assert.ok(state.frozen.length >= total - Math.ceil(1200 / width) - 2, `${state.frozen.length} of ${total} lines kept`);
  }
});

test('paragraph tail: kept lines are the same objects from frame to frame (rows are not redrawn)', () => {
  const state = newParagraphTail();
  const body = 'The quick brown fox jumps over the lazy dog while the `agent` writes **markdown**.\n'.repeat(20);
  const first = paragraphTailLines(state, body, 40)!;
  const next = paragraphTailLines(state, `${body}More`, 40)!;
  assert.ok(first.length > 10);
  // All but the lines of the last source line (held until the next one shows how it starts) and the one before.
  for (let i = 0; i < first.length - 4; i++) assert.equal(next[i], first[i], `line ${i}`);
});

test('a long message streamed delta by delta: every frame equals a fresh render of the same text', async () => {
  const columns = 72;
  const rows = 30;
  for (const [seed, hostility] of [[11, 0.02], [12, 0.25]] as const) {
    const stream = await renderApp({ columns, rows });
    try {
      await stream.emit(userMessage(U, 'Please write a long answer.'));
      const body = `${message(seed, 1400, hostility)}\nThe last words.`;
      let streamed = '';
      let step = 0;
      for (const d of deltas(seed, body)) {
        streamed += d;
        await stream.emit(text(U, 'ur-agent', d));
        // Every third frame, and the last: a fresh App given the whole text at once.
        if (step++ % 3 !== 0 && streamed !== body) continue;
        const fresh = await renderApp({ columns, rows });
        try {
          await fresh.emit(userMessage(U, 'Please write a long answer.'), text(U, 'ur-agent', streamed));
          assert.equal(stream.rawFrame(), fresh.rawFrame(), `seed ${seed} after ${streamed.length} chars:\n${stream.frame()}\n---\n${fresh.frame()}`);
        } finally { fresh.unmount(); }
      }
      // The end of the text is on screen (nothing dropped at the tail).
      assert.match(stream.frame(), /The last words\./);
    } finally { stream.unmount(); }
  }
});

/**
 * Word commits: the growing line is committed up to its last word break when nothing there is
 * left open. Texts whose later characters change what the committed words were (a setext
 * underline makes the paragraph a heading, a delimiter row makes it a table, a closer turns a
 * literal `**` into bold, a fence or a list starts on the next line) must still come out as a
 * fresh render of each prefix, and the words must really be committed mid-line.
 */
test('paragraph tail: word commits in the growing line stay exact when later text changes the block', () => {
  const texts = [
    'The quick brown fox jumps over the lazy dog and keeps on running far away\n===',
    'The quick brown fox jumps over the lazy dog and keeps on running far away\n---\nafter the rule',
    'name of the thing | value of the thing | more words here\n--- | --- | ---\ncell one | cell two | cell three',
    'plain words before an open **bold that goes on for many words and closes** then more plain words follow',
    'words before a tick `code that spans many words and then closes` and more words after it here',
    'a line of many words that ends and then\n```js\nconst fenced = code opened mid stream;\n```\nand words after',
    'a line of many words that ends and then\n- a list item with words\n- another item with more words',
    'words and words and words then a lone ** that never closes and words go on and on and on',
    'words with a hard break at the end of this line  \nand the next line goes on with more words',
    'snake_case words and x*y and 2*3 and a_b_c then more words to wrap around the lane width',
    'trailing words then a link [label with words](https://example.dev/path) and words after',
    'the end of a line before a heading starts\n# Heading with words\nand then text again for a while',
    'letters then digits 1984 then 1. not a list here and 2) neither and more words after it',
  ];
  let midLine = 0;
  for (const body of texts) {
    for (const width of [7, 16, 30]) {
      const state = newParagraphTail();
      for (let n = 1; n <= body.length; n++) {
        const prefix = body.slice(0, n);
        const got = paragraphTailLines(state, prefix, width);
        const lineStart = prefix.lastIndexOf('\n') + 1;
        if (state.done > lineStart) midLine += 1;
        if (got === null) continue;
        assert.deepEqual(got, markdownLines(sanitize(prefix), width), `width ${width} after ${n}: ${JSON.stringify(prefix)}`);
      }
    }
  }
  assert.ok(midLine > 500, `${midLine} frames with words committed mid-line`);
});

test('a paragraph turned into a heading, a table and a fence mid-stream: every frame equals a fresh render', async () => {
  const columns = 40;
  const rows = 16;
  const body = 'The quick brown fox jumps over the lazy dog and keeps on running\n===\n'
    + 'name of the thing | value of it\n--- | ---\ncell one | cell two\n\n'
    + 'words that run into a fence\n```ts\nconst x = 1; // words\n```\nand the end of it.';
  const stream = await renderApp({ columns, rows });
  try {
    await stream.emit(userMessage(U, 'Please write a long answer.'));
    let streamed = '';
    for (const ch of body) {
      streamed += ch;
      await stream.emit(text(U, 'ur-agent', ch));
      const fresh = await renderApp({ columns, rows });
      try {
        await fresh.emit(userMessage(U, 'Please write a long answer.'), text(U, 'ur-agent', streamed));
        assert.equal(stream.rawFrame(), fresh.rawFrame(), `after ${JSON.stringify(streamed)}:\n${stream.frame()}\n---\n${fresh.frame()}`);
      } finally { fresh.unmount(); }
    }
  } finally { stream.unmount(); }
});

test('paragraph tail: text taken as plain without the lexer is what lexing it gives (random text of the plain alphabet and its neighbours)', () => {
  const rnd = prng(34);
  const PLAIN = 'abcXYZ019 ,.;!?\'"()-';
  const NEAR = ['www.', 'WWW.', ' ', '  ', '*', '_', '`', ':', '@', '&', '<', '[', '\\', '#', '1.', '-', '~', '|', 'é', '\n'];
  let taken = 0;
  for (let i = 0; i < 20_000; i++) {
    let raw = '';
    const n = 1 + Math.floor(rnd() * 40);
    for (let k = 0; k < n; k++) raw += rnd() < 0.97 ? PLAIN[Math.floor(rnd() * PLAIN.length)]! : NEAR[Math.floor(rnd() * NEAR.length)]!;
    const plain = plainSpans(raw);
    if (!plain) continue;
    taken += 1;
    assert.deepEqual(plain, paragraphSpans(raw), JSON.stringify(raw));
  }
  assert.ok(taken > 2_000, `plain text is taken (${taken})`);
  assert.deepEqual(plainSpans('The quick brown fox, (it said) "yes" - 42 times!'), [{ text: 'The quick brown fox, (it said) "yes" - 42 times!' }]);
  for (const raw of ['see www.x.dev', 'ends in a space ', '1. a list', 'has `code`', 'a **b**', 'x:y', 'a@b.c', ' lead']) assert.equal(plainSpans(raw), null, raw);
});
