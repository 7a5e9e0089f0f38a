import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Output from '../../node_modules/ink/build/output.js';
import { styledCharsFromTokens, tokenize } from '@alcalzone/ansi-tokenize';
import { fastGet, inkGet, installInkOutputCache, rowsBuiltSoFar, tokenized } from '../../components/text/ink-output';

type Transformer = (line: string, index: number) => string;
type Op =
  | { kind: 'write'; x: number; y: number; text: string; transformers: Transformer[] }
  | { kind: 'clip'; clip: { x1?: number; x2?: number; y1?: number; y2?: number } }
  | { kind: 'unclip' };

/** A deterministic pseudo-random generator (so a failure reproduces). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const PIECES = ['hello', ' ', 'wörld', '界', '👍', '─', '→', '·', 'é', 'x', '  ', 'é\u0301', '⚙', '✓', 'A'];
const STYLES = ['\x1b[1m', '\x1b[2m', '\x1b[22m', '\x1b[31m', '\x1b[39m', '\x1b[90m', '\x1b[0m', '\x1b[7m', '\x1b[27m', '\x1b[3m', '\x1b[4m'];

function randomLine(r: () => number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) {
    if (r() < 0.3) s += STYLES[Math.floor(r() * STYLES.length)];
    s += PIECES[Math.floor(r() * PIECES.length)];
  }
  return r() < 0.5 ? `${s}\x1b[0m` : s;
}

function randomOps(r: () => number, width: number, height: number): Op[] {
  const ops: Op[] = [];
  let depth = 0;
  const count = 1 + Math.floor(r() * 12);
  for (let i = 0; i < count; i++) {
    const pick = r();
    if (pick < 0.1) {
      depth += 1;
      const x1 = Math.floor(r() * width);
      const y1 = Math.floor(r() * height);
      ops.push({ kind: 'clip', clip: r() < 0.5 ? { x1, x2: x1 + Math.floor(r() * width), y1, y2: y1 + Math.floor(r() * height) } : { x1, x2: x1 + 5 } });
    } else if (pick < 0.15 && depth > 0) {
      depth -= 1;
      ops.push({ kind: 'unclip' });
    } else {
      const lines = Array.from({ length: 1 + Math.floor(r() * 3) }, () => randomLine(r, Math.floor(r() * 10)));
      const transformers: Transformer[] = r() < 0.3 ? [(l) => `\x1b[32m${l}\x1b[39m`] : [];
      // Mostly on screen; sometimes past an edge (Ink drops or extends those rows).
      const x = Math.floor(r() * (width + 4)) - (r() < 0.05 ? 2 : 0);
      const y = Math.floor(r() * (height + 2)) - (r() < 0.05 ? 1 : 0);
      ops.push({ kind: 'write', x, y, text: lines.join('\n'), transformers });
    }
  }
  return ops;
}

function build(ops: readonly Op[], width: number, height: number): Output {
  const o = new Output({ width, height });
  for (const op of ops) {
    if (op.kind === 'write') o.write(op.x, op.y, op.text, { transformers: op.transformers });
    else if (op.kind === 'clip') o.clip(op.clip as Parameters<Output['clip']>[0]);
    else o.unclip();
  }
  return o;
}

test('the cached get() gives Ink\'s output byte for byte (styles, wide characters, clips, off-screen writes)', () => {
  const r = rng(42);
  for (let screen = 0; screen < 400; screen++) {
    const width = 1 + Math.floor(r() * 30);
    const height = 1 + Math.floor(r() * 6);
    const ops = randomOps(r, width, height);
    const want = inkGet.call(build(ops, width, height));
    const got = fastGet.call(build(ops, width, height) as never);
    assert.deepEqual(got, want, `screen ${screen} (${width}×${height}): ${JSON.stringify(ops.map((o) => (o.kind === 'write' ? [o.x, o.y, o.text] : o.kind)))}`);
  }
});

test('a row reused from an earlier frame is the same as a fresh one; changed rows are rebuilt', () => {
  const frames = [
    ['\x1b[1mheader\x1b[22m', 'line one', 'line two'],
    ['\x1b[1mheader\x1b[22m', 'line one', 'line two, longer'],
    ['\x1b[1mheader\x1b[22m', 'line one', 'line two'],
    ['\x1b[31mheader\x1b[39m', 'line one', ''],
  ];
  for (const rows of frames) {
    const ops: Op[] = rows.map((text, y) => ({ kind: 'write', x: 2, y, text, transformers: [] }));
    ops.push({ kind: 'write', x: 0, y: 0, text: '│\n│\n│', transformers: [(l) => `\x1b[90m${l}\x1b[39m`] });
    assert.deepEqual(fastGet.call(build(ops, 20, 3) as never), inkGet.call(build(ops, 20, 3)));
  }
  // Same writes at another width: not the cached rows of the first.
  const ops: Op[] = [{ kind: 'write', x: 25, y: 0, text: 'far', transformers: [] }];
  assert.deepEqual(fastGet.call(build(ops, 20, 1) as never), inkGet.call(build(ops, 20, 1)));
  assert.deepEqual(fastGet.call(build(ops, 30, 1) as never), inkGet.call(build(ops, 30, 1)));
});

test('a growing row (a streamed line) gives Ink\'s output frame after frame: styles, escapes and wide characters at the cut', () => {
  const r = rng(7);
  const GROW = ['a', 'b c', ' ', 'é', '\u0301', '界', '👍', '\x1b[1m', '\x1b[22m', '\x1b[0m', '\x1b[31m', '\x1b[39m', '\x1b[', '1m', 'm', ';', '\x1b', '\x9b', '\x1b]8;;https://x.dev\x07', 'z'];
  for (let run = 0; run < 60; run++) {
    const width = 10 + Math.floor(r() * 30);
    let line = '';
    for (let step = 0; step < 40; step++) {
      const n = 1 + Math.floor(r() * 3);
      for (let k = 0; k < n; k++) line += r() < 0.6 ? 'abcdefgh '[Math.floor(r() * 9)]! : GROW[Math.floor(r() * GROW.length)]!;
      const ops: Op[] = [
        { kind: 'write', x: 0, y: 0, text: '\x1b[1mhead\x1b[22m', transformers: [] },
        { kind: 'write', x: 1, y: 1, text: line, transformers: [] },
      ];
      const want = inkGet.call(build(ops, width, 2));
      const got = fastGet.call(build(ops, width, 2) as never);
      assert.deepEqual(got, want, `run ${run}, step ${step}: ${JSON.stringify(line)}`);
    }
  }
});

test('installInkOutputCache puts the cached get() on Ink\'s Output class, once', () => {
  assert.equal(installInkOutputCache(), true);
  assert.equal(Output.prototype.get, fastGet);
  assert.equal(installInkOutputCache(), true);
});

test('a spinner\'s rows come back from the cache: each of its frames is built once, however long it spins', () => {
  const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  const frame = (i: number): { fast: string; ink: string } => {
    const o = new Output({ width: 60, height: 3 });
    o.write(0, 0, `\x1b[36;1m▶ user → ur-agent\x1b[0m  \x1b[36m${SPINNER[i % SPINNER.length]} thinking\x1b[0m\x1b[90m ${'─'.repeat(30)}\x1b[0m`, { transformers: [] });
    o.write(0, 1, `streamed text ${'word '.repeat(i % 7)}`, { transformers: [] }); // a row that changes too
    o.write(0, 2, `legion · ${SPINNER[(i + 3) % SPINNER.length]} busy: ur-agent`, { transformers: [] });
    return { fast: fastGet.call(o as never).output, ink: inkGet.call(o).output };
  };
  // Three frames per spinner step (a stream draws at 30/s, the spinner moves at ~8/s), five cycles.
  const steps = SPINNER.length * 5;
  let firstCycle = 0;
  const before = rowsBuiltSoFar();
  for (let step = 0; step < steps; step++) {
    for (let k = 0; k < 3; k++) {
      const { fast, ink } = frame(step);
      assert.equal(fast, ink, `frame ${step}/${k}`);
    }
    if (step === SPINNER.length - 1) firstCycle = rowsBuiltSoFar() - before;
  }
  assert.ok(firstCycle >= SPINNER.length * 2, 'the first cycle builds the spinner rows');
  assert.equal(rowsBuiltSoFar() - before, firstCycle, 'later cycles build none');
});

test('a line of printable ASCII, drawing symbols and SGR sequences gets the styled characters ansi-tokenize gives it (compound, 256- and true-colour codes, resets, empty and stray sequences)', () => {
  const r = rng(34);
  const TEXT = ['a', 'hello', ' ', '  ', '~', '[m', ';', '0', 'x y', '─', '│', '·', '…', '→', '▶', '█', '╭──╮', '•'];
  const CODES = [...STYLES, '\x1b[m', '\x1b[1;31m', '\x1b[0;2;3m', '\x1b[38;5;123m', '\x1b[48;2;1;2;3m', '\x1b[38;5m', '\x1b[38;2;9m', '\x1b[;m', '\x1b[1;22;1m', '\x1b[49m', '\x1b[53m', '\x1b[55m', '\x1b[9m'];
  const OTHER = ['\x1b[2K', '\x1b]8;;http://a\x07', '界', 'é\u0301', '\x1b', '\x9b31m', '\t'];
  let simple = 0;
  for (let i = 0; i < 4000; i++) {
    let line = '';
    let other = false;
    const n = Math.floor(r() * 12);
    for (let k = 0; k < n; k++) {
      const pick = r();
      other ||= pick >= 0.97;
      line += pick < 0.45 ? CODES[Math.floor(r() * CODES.length)] : pick < 0.97 ? TEXT[Math.floor(r() * TEXT.length)] : OTHER[Math.floor(r() * OTHER.length)];
    }
    if (!other) simple += 1;
    assert.deepEqual(tokenized(line), styledCharsFromTokens(tokenize(line)), JSON.stringify(line));
  }
  assert.ok(simple > 2000, `the simple lines were tested (${simple})`);
  // Every symbol the simple lines take, alone, between ASCII, styled, and beside each other.
  const symbols: string[] = ['\u00b7'];
  for (const [from, to] of [[0x2010, 0x2027], [0x2030, 0x205e], [0x2190, 0x21ff], [0x2500, 0x25fc]] as const) for (let c = from; c <= to; c++) symbols.push(String.fromCharCode(c));
  for (let i = 0; i < symbols.length; i++) {
    const c = symbols[i]!;
    const next = symbols[(i * 7 + 3) % symbols.length]!;
    for (const line of [c, `a${c}b`, `\x1b[1m${c}\x1b[22m${next}`, `${c}${next}${c}`, `${c}\x1b[31m`]) {
      assert.deepEqual(tokenized(line), styledCharsFromTokens(tokenize(line)), JSON.stringify(line));
    }
  }
  // The whole screen: the same frame through Ink's get() and the cached one.
  const line = '\x1b[1;38;5;33mLegion\x1b[22;39m \x1b[2m·\x1b[22m \x1b[7m ready \x1b[27m\x1b[0m';
  const o = new Output({ width: 40, height: 2 });
  o.write(0, 0, line, { transformers: [] });
  o.write(3, 1, 'plain text', { transformers: [(l) => `\x1b[90m${l}\x1b[39m`] });
  assert.equal(fastGet.call(o as never).output, inkGet.call(o).output);
});
