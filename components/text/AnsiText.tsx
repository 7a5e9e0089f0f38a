import React, { memo, useCallback } from 'react';
import { Box, Text, Transform, useIsScreenReaderEnabled } from 'ink';
import type { Theme } from '../theme';
import type { Line } from './line';
import { ansiLine } from './ansi';

export interface AnsiTextProps {
  /** One line of text with SGR styles (`lineToAnsi`), no '\n'. */
  readonly text: string;
  /** The cells it takes (`ansiLine(...).width`); at most the width of its box. */
  readonly width: number;
}

/**
 * One styled line whose width is known, drawn without Ink measuring it on every frame.
 *
 * Ink measures every text node on every frame (`widest-line` → `string-width` in its
 * `renderNodeToOutput`), and `string-width` segments graphemes as soon as a line holds one
 * character outside printable ASCII: a 200-cell row with a `─`, `•`, `…` or `·` costs ~0.2–0.6 ms
 * per frame, unchanged or not (docs/streaming.md#the-streamed-tail-in-a-lane). Here the text
 * node holds `width` spaces (Ink's ASCII fast path: well under a microsecond) and its transform,
 * which Ink applies to each line of output when it builds the frame (`Output.get`), puts the
 * styled line in place of the spaces. Layout and frame are those of `<Text>{text}</Text>`:
 * the same width and one row, and Ink neither wraps nor cuts a line that fits its box.
 *
 * Contract: `width` is the text's width in cells and fits its box, and no ancestor clips
 * horizontally (`overflow="hidden"`): a line Ink had to wrap or cut is not the placeholder, and
 * is drawn as the spaces Ink made of it. With a screen reader (which reads text nodes, not
 * transforms) the text itself is rendered.
 */
export const AnsiText = memo(function AnsiText({ text, width }: AnsiTextProps) {
  const reader = useIsScreenReaderEnabled();
  // An empty Ink text takes no row: an empty line is one space, as `<Text>{' '}</Text>`.
  const shown = text === '' || width <= 0 ? ' ' : text;
  const placeholder = spaces(text === '' || width <= 0 ? 1 : width);
  const transform = useCallback((line: string): string => (line === placeholder ? shown : line), [placeholder, shown]);
  if (reader) return <Text>{shown}</Text>;
  return <Transform transform={transform}>{placeholder}</Transform>;
});

export interface AnsiBlockProps {
  /** One styled line per row (`ansiLine(...).text`, '' for a blank row), each at most `box` cells. */
  readonly texts: readonly string[];
  /** The width of the block in cells (its box's width). */
  readonly box: number;
}

/**
 * Rows of styled lines as one Ink text node, `box` cells wide and one row per line: a lane's
 * rows (header, transcript, activity). As AnsiText, but for a whole column of rows at once:
 * the text node holds `texts.length` rows of `box` spaces and its transform, which Ink calls
 * for each output line with the line's index, puts the styled line of that row in place. So a
 * frame costs React one element and Ink one text node per lane instead of one per row, and the
 * node's size depends on the number of rows only: a growing or changing line never makes Yoga
 * lay the screen out again. The frame is that of one `<Text>` per row in a column (Ink trims each
 * row's trailing spaces); test/tui/ansi-text.test.tsx compares them. Same contract as AnsiText
 * (lines fit the box, no horizontal clipping); with a screen reader, one `<Text>` per row.
 */
export const AnsiBlock = memo(function AnsiBlock({ texts, box }: AnsiBlockProps) {
  const reader = useIsScreenReaderEnabled();
  const row = spaces(Math.max(1, box));
  const transform = useCallback((line: string, index: number): string => (line === row ? texts[index] || ' ' : line), [row, texts]);
  if (reader) {
    return <Box flexDirection="column">{texts.map((text, i) => <Text key={i}>{text || ' '}</Text>)}</Box>;
  }
  if (texts.length === 0) return null;
  return <Transform transform={transform}>{rows(row, texts.length)}</Transform>;
});

const blocks = new Map<string, string>();
/** Empty the cache of blocks (the snapshot build's warm-up render leaves none: components/warm-render.tsx). */
export function forgetAnsiBlocks(): void {
  blocks.clear();
}
/** `n` rows of `row` joined by newlines, the same string object each time (Ink caches measures by string). */
function rows(row: string, n: number): string {
  const key = `${row.length}:${n}`;
  let block = blocks.get(key);
  if (block === undefined) {
    if (blocks.size > 64) blocks.clear(); // terminal sizes seen: a handful
    block = Array.from({ length: n }, () => row).join('\n');
    blocks.set(key, block);
  }
  return block;
}

const blanks: string[] = [];
/** `' '.repeat(n)`, the same string object for the same n (Ink caches measures by string). */
function spaces(n: number): string {
  return (blanks[n] ??= ' '.repeat(n));
}

/** A `Line` as an AnsiText (its ANSI string and width from `ansiLine`). */
export function AnsiLine({ line, theme }: { readonly line: Line; readonly theme: Theme }): React.ReactElement {
  const { text, width } = ansiLine(line, theme);
  return <AnsiText text={text} width={width} />;
}
