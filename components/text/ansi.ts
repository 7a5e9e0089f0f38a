import type { Line, Span } from './line';
import type { Theme } from '../theme';
import { cellWidth } from './width';
import { withoutTerminalControls } from '../../src/terminal-text';

const FG: Readonly<Record<string, number>> = {
  black: 30, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, white: 37, gray: 90,
};

// A line's ANSI string and width are built once per (line, theme): lines are immutable and shared.
const cache = new WeakMap<Line, { theme: Theme; text: string; width: number }>();

/** A styled line as one ANSI string (one Ink text node per line keeps frames cheap). */
export function lineToAnsi(line: Line, theme: Theme): string {
  return ansiLine(line, theme).text;
}

/** The ANSI string of a line and the cells it takes. */
export function ansiLine(line: Line, theme: Theme): { readonly text: string; readonly width: number } {
  const hit = cache.get(line);
  if (hit && hit.theme === theme) return hit;
  let text = '';
  let width = 0;
  for (const span of line) {
    const clean = withoutTerminalControls(span.text);
    text += styled(clean, span, theme);
    width += cellWidth(clean);
  }
  const entry = { theme, text, width };
  cache.set(line, entry);
  return entry;
}

/**
 * A span as ANSI. Its text is stripped of control sequences here, whoever built the span: this is
 * the one place every line of the TUI passes before Ink writes it (a tool name, an agent id or a
 * path a model chose reaches the screen only through it), so no span can carry an escape.
 */
export function spanToAnsi(span: Span, theme: Theme): string {
  return styled(withoutTerminalControls(span.text), span, theme);
}

function styled(text: string, span: Span, theme: Theme): string {
  const codes: number[] = [];
  const color = theme.tone(span.tone);
  if (color && FG[color] !== undefined) codes.push(FG[color]!);
  if (span.bold) codes.push(1);
  if (span.dim) codes.push(2);
  if (span.italic && theme.color) codes.push(3);
  if (span.underline && !theme.plain) codes.push(4);
  if (span.inverse) codes.push(7);
  if (span.strike && theme.color) codes.push(9);
  if (codes.length === 0) return text;
  return `\x1b[${codes.join(';')}m${text}\x1b[0m`;
}

// Tabs become spaces; other control characters (escapes and the C1 range included) are dropped
// so text from a model or a tool can never move the cursor or change the terminal's state.
export function sanitize(text: string): string {
  return withoutTerminalControls(text.replace(/\t/g, '    '));
}
