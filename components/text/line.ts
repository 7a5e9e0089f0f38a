/**
 * A styled run of text and a display line made of runs. Lanes are built from pre-wrapped
 * lines: a line never wraps again when drawn (its width is at most the lane's width).
 */
export type Tone =
  | 'accent' | 'user' | 'agent' | 'muted' | 'ok' | 'error' | 'warn' | 'code'
  | 'keyword' | 'string' | 'number' | 'comment' | 'title' | 'type' | 'attr' | 'heading' | 'link';

export interface Span {
  readonly text: string;
  readonly tone?: Tone;
  readonly bold?: boolean;
  readonly italic?: boolean;
  readonly underline?: boolean;
  readonly dim?: boolean;
  readonly inverse?: boolean;
  readonly strike?: boolean;
}

export type Line = readonly Span[];

export const EMPTY_LINE: Line = [];

export function lineText(line: Line): string {
  let out = '';
  for (const span of line) out += span.text;
  return out;
}
