import '../helpers/own-home';
/**
 * AnsiText (components/text/AnsiText.tsx) draws a styled line without Ink measuring it on every
 * frame: its text node holds spaces and a transform puts the line in their place. Its frames
 * must be the frames of `<Text>{line}</Text>`, byte for byte, also after updates (a new line of
 * the same width must not show the old one) and for a screen reader.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import React from 'react';
import { Box, Text } from 'ink';
import { render } from 'ink-testing-library';
import { AnsiBlock, AnsiLine, AnsiText } from '../../components/text/AnsiText';
import { ansiLine } from '../../components/text/ansi';
import { createTheme } from '../../components/theme';
import type { Line, Span } from '../../components/text/line';
import { truncate } from '../../components/text/width';
import { prng } from '../helpers/prng';

const THEME = createTheme({ color: true, plain: false });
const PIECES = ['hello', ' ', 'wörld', '界面', '👍', '─', '→', '·', 'é\u0301', 'x', '  ', '⚙', '✓', '…', '⠋', 'A b c', ''];
const TONES = [undefined, 'muted', 'accent', 'code', 'warn', 'error', 'user'] as const;

function randomLine(rnd: () => number, width: number): Line {
  const spans: Span[] = [];
  const n = Math.floor(rnd() * 6);
  for (let i = 0; i < n; i++) {
    const text = PIECES[Math.floor(rnd() * PIECES.length)]!.repeat(1 + Math.floor(rnd() * 4));
    spans.push({ text, tone: TONES[Math.floor(rnd() * TONES.length)], bold: rnd() < 0.3, dim: rnd() < 0.2, inverse: rnd() < 0.1 });
  }
  // Fit the box, as every caller does (lanes wrap and truncate to their width).
  const fitted: Span[] = [];
  let used = 0;
  for (const s of spans) {
    const t = truncate(s.text, width - used, '');
    if (t === '') continue;
    fitted.push({ ...s, text: t });
    used += ansiLine([{ text: t }], THEME).width;
  }
  return fitted;
}

/** Two lanes side by side, as LaneGrid draws them, each a column of rows. */
function Screen({ left, right, width, fast, box = false }: { left: readonly Line[]; right: readonly Line[]; width: number; fast: boolean; box?: boolean }) {
  const cell = (line: Line, i: number) => (fast
    ? <AnsiLine key={i} line={line} theme={THEME} />
    : <Text key={i}>{ansiLine(line, THEME).text || ' '}</Text>);
  // box: the whole column as one AnsiBlock, as a lane draws its rows.
  const column = (lines: readonly Line[]) => (
    <Box flexDirection="column" width={width} height={lines.length}>
      {fast && box ? <AnsiBlock texts={lines.map((l) => ansiLine(l, THEME).text)} box={width} /> : lines.map(cell)}
    </Box>
  );
  return (
    <Box flexDirection="row">
      {column(left)}
      <Box width={1} height={left.length} borderStyle="single" borderTop={false} borderRight={false} borderBottom={false} />
      {column(right)}
    </Box>
  );
}

test('AnsiText frames equal <Text> frames: wide characters, marks, emoji, styles, empty lines, side by side', () => {
  for (const [seed, box] of [[1, false], [2, false], [3, false], [4, true], [5, true], [6, false], [7, true], [8, true]] as const) {
    const rnd = prng(seed);
    const width = 5 + Math.floor(rnd() * 40);
    const rows = 1 + Math.floor(rnd() * 8);
    const lines = (): Line[] => Array.from({ length: rows }, () => randomLine(rnd, width));
    let left = lines();
    let right = lines();
    const slow = render(<Screen left={left} right={right} width={width} fast={false} />);
    const fast = render(<Screen left={left} right={right} width={width} fast box={box} />);
    try {
      for (let step = 0; step < 25; step++) {
        assert.equal(fast.lastFrame(), slow.lastFrame(), `seed ${seed}${box ? ' (box)' : ''}, step ${step}`);
        // Change some rows: new text, the same width or not, rows moved up (a stream scrolling).
        left = rnd() < 0.3 ? [...left.slice(1), randomLine(rnd, width)] : left.map((l) => (rnd() < 0.3 ? randomLine(rnd, width) : l));
        right = right.map((l) => (rnd() < 0.3 ? randomLine(rnd, width) : l));
        slow.rerender(<Screen left={left} right={right} width={width} fast={false} />);
        fast.rerender(<Screen left={left} right={right} width={width} fast box={box} />);
      }
    } finally {
      slow.unmount();
      fast.unmount();
    }
  }
});

test('AnsiText: a new line of the same width replaces the old one (the placeholder is the same, the text is not)', () => {
  const textFrame = (t: string): string | undefined => {
    const v = render(<Text>{t || ' '}</Text>);
    const frame = v.lastFrame();
    v.unmount();
    return frame;
  };
  const view = render(<AnsiText text="abc" width={3} />);
  try {
    assert.equal(view.lastFrame(), 'abc');
    view.rerender(<AnsiText text="xyz" width={3} />);
    assert.equal(view.lastFrame(), 'xyz');
    const styled = '\x1b[1m─→·\x1b[0m';
    view.rerender(<AnsiText text={styled} width={3} />);
    assert.match(view.lastFrame() ?? '', /─→·/);
    assert.equal(view.lastFrame(), textFrame(styled));
    view.rerender(<AnsiText text="" width={0} />);
    assert.equal(view.lastFrame(), textFrame(''));
  } finally {
    view.unmount();
  }
});

test('AnsiText with a screen reader: the text itself, as <Text>', () => {
  const before = process.env.INK_SCREEN_READER;
  process.env.INK_SCREEN_READER = 'true';
  try {
    const lines = ['one ─ line', 'two → lines', ''];
    const fast = render(<Box flexDirection="column">{lines.map((t, i) => <AnsiText key={i} text={t} width={ansiLine([{ text: t }], THEME).width} />)}</Box>);
    const slow = render(<Box flexDirection="column">{lines.map((t, i) => <Text key={i}>{t || ' '}</Text>)}</Box>);
    const block = render(<Box flexDirection="column"><AnsiBlock texts={lines} box={20} /></Box>);
    try {
      assert.match(fast.lastFrame() ?? '', /one ─ line/);
      assert.equal(fast.lastFrame(), slow.lastFrame());
      assert.equal(block.lastFrame(), slow.lastFrame(), 'AnsiBlock');
    } finally {
      fast.unmount();
      slow.unmount();
      block.unmount();
    }
  } finally {
    if (before === undefined) delete process.env.INK_SCREEN_READER;
    else process.env.INK_SCREEN_READER = before;
  }
});
