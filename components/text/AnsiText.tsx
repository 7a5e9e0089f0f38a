import React, { memo, useCallback } from 'react';
import { Text, Transform, useIsScreenReaderEnabled } from 'ink';
import type { Theme } from '../theme';
import type { Line } from './line';
import { ansiLine } from './ansi';

export interface AnsiTextProps {
  /** One line of text with SGR styles (`lineToAnsi`), no '\n'. */
  readonly text: string;
  /** The cells it takes (`ansiLine(...).width`); at most the width of its box. */
  readonly width: number;
  /**
   * The width of its box, for a line alone on its row (a lane's row): the placeholder is then
   * always that many spaces, so the node's size never changes with its text and a growing line
   * does not make Yoga lay the screen out again. The frame is the same (Ink trims each row's
   * trailing spaces). At least `width`.
   */
  readonly box?: number;
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
export const AnsiText = memo(function AnsiText({ text, width, box }: AnsiTextProps) {
  const reader = useIsScreenReaderEnabled();
  // An empty Ink text takes no row: an empty line is one space, as `<Text>{' '}</Text>`.
  const shown = text === '' || width <= 0 ? ' ' : text;
  const placeholder = spaces(box !== undefined && box >= width && box > 0 ? box : text === '' || width <= 0 ? 1 : width);
  const transform = useCallback((line: string): string => (line === placeholder ? shown : line), [placeholder, shown]);
  if (reader) return <Text>{shown}</Text>;
  return <Transform transform={transform}>{placeholder}</Transform>;
});

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
