import type { Tone } from './text/line';
import { FANCY_MARKDOWN, PLAIN_MARKDOWN, type MarkdownGlyphs } from './markdown/markdown-lines';

/** The glyphs of a transcript (lanes/entry-lines.ts): fancy, or plain ASCII. */
export interface TranscriptGlyphs {
  readonly markdown: MarkdownGlyphs;
  readonly prompt: string;
  readonly tool: string;
  readonly ok: string;
  readonly error: string;
  readonly pending: string;
  readonly waiting: string;
  readonly more: string;
  /** Marks a folded compaction row (`⋯ 142 messages summarized`). */
  readonly folded: string;
  /** Separates a session's responder and name: `scribe · notes`. */
  readonly dot: string;
}

/**
 * How the UI looks: colours (none with NO_COLOR), glyphs and spinners (none in plain mode,
 * which also drops box drawing and side-by-side lanes so a screen reader reads one lane at a
 * time). Built once at start; components read it from context.
 */
export interface Theme {
  readonly color: boolean;
  readonly plain: boolean;
  /** Ink colour of a tone, undefined without colour. */
  tone(tone: Tone | undefined): string | undefined;
  readonly transcript: TranscriptGlyphs;
  readonly arrow: string;
  readonly dot: string;
  readonly rule: string;
  readonly focusMark: string;
  /** Spinner frames; empty in plain mode (status words only). */
  readonly spinner: readonly string[];
}

const TONES: Readonly<Record<Tone, string>> = {
  accent: 'cyan', user: 'green', agent: 'blue', muted: 'gray', ok: 'green', error: 'red', warn: 'yellow', code: 'yellow',
  keyword: 'magenta', string: 'green', number: 'yellow', comment: 'gray', title: 'blue', type: 'cyan', attr: 'cyan',
  heading: 'cyan', link: 'blue',
};

const FANCY_TRANSCRIPT: TranscriptGlyphs = {
  markdown: FANCY_MARKDOWN, prompt: '› ', tool: '⚙', ok: '✓', error: '✗', pending: '○', waiting: '⏸ awaiting approval', more: '…', folded: '⋯', dot: '·',
};
const PLAIN_TRANSCRIPT: TranscriptGlyphs = {
  markdown: PLAIN_MARKDOWN, prompt: '> ', tool: 'tool:', ok: 'done', error: 'failed', pending: 'running', waiting: 'awaiting approval', more: '...', folded: '...', dot: '-',
};

export function createTheme(options: { color: boolean; plain: boolean }): Theme {
  const { color, plain } = options;
  return {
    color,
    plain,
    tone: (tone) => (color && tone ? TONES[tone] : undefined),
    transcript: plain ? PLAIN_TRANSCRIPT : FANCY_TRANSCRIPT,
    arrow: plain ? '->' : '→',
    dot: plain ? '-' : '·',
    rule: plain ? '-' : '─',
    focusMark: plain ? '>' : '▶',
    spinner: plain ? [] : ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'],
  };
}

/** NO_COLOR (any non-empty value) or FORCE_COLOR=0 turns colour off; --plain, ui.plain or LEGION_SCREEN_READER=1 turn plain on. */
export function themeFromEnv(env: Readonly<Record<string, string | undefined>>, plainFlag: boolean, plainConfig: boolean): Theme {
  const color = !(env.NO_COLOR !== undefined && env.NO_COLOR !== '') && env.FORCE_COLOR !== '0';
  const plain = plainFlag || plainConfig || env.LEGION_SCREEN_READER === '1';
  return createTheme({ color, plain });
}
