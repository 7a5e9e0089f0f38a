import type { Line, Span } from '../text/line';
import { wrapSpans } from '../text/wrap';
import { paragraphSpans } from '../markdown/markdown-lines';
import { sanitize } from '../text/ansi';

/**
 * The growing last paragraph of a streamed message, rendered incrementally.
 *
 * A streamed message's text after its last paragraph break (line-source.ts) grows by appends
 * and was lexed and wrapped in full on every frame. Its complete source lines are committed in
 * runs: a run is committed when it lexes as one paragraph in which nothing is left open (no
 * literal `*` `_` `~` backtick `[` `]` `<` `>` `|` outside code and links, an intraword `_`
 * aside), its last line ends in neither a space nor a backslash (a hard break), and the line
 * after it can only continue a paragraph (PLAIN_START: no list, heading, rule, fence, setext
 * underline, table row or indent). The paragraph's spans are then those of its runs joined by
 * one space (a soft break), and since wrapping is greedy only the last output line of the
 * committed runs can still change: the lines before it are kept (`frozen`, the same objects
 * every frame, so their rows are neither re-rendered nor re-measured) and wrapping resumes from
 * that last line (`pending`). Per frame: the lines held since the last commit, usually the
 * growing line alone.
 *
 * Contract: `paragraphTailLines` returns exactly `markdownLines(sanitize(region), width)`, or
 * null when the region is not such a paragraph (the caller then renders it in full);
 * test/tui/stream-tail.test.tsx compares every frame of long streams with a fresh render.
 */
export interface ParagraphTail {
  /** Offset in the raw region just after the last committed source line (its '\n' included). */
  done: number;
  /** Offset just after the last complete source line seen: lines from `done` to here are held. */
  scan: number;
  /** Output lines that can no longer change. */
  readonly frozen: Line[];
  /** The last output line of the complete source lines: wrapping resumes from it (null before the first). */
  pending: Line | null;
  /** The region's first line is not a paragraph's: it is rendered in full from now on. */
  unsafe: boolean;
}

export function newParagraphTail(): ParagraphTail {
  return { done: 0, scan: 0, frozen: [], pending: null, unsafe: false };
}

const SOFT_BREAK: Span = { text: ' ' };
/**
 * A line that can only continue a paragraph: a letter; a digit not starting `1.` / `1)` (a
 * list); or an inline opener (`**`, `_`, `~~`, a backtick, `&`, a bracket or quote) followed by
 * text, never a list bullet (`* `), a rule (`***`, `_ _ _`) or a fence (three backticks or tildes).
 */
const PLAIN_START = /^(?:\p{L}|\d(?!\d*[.)])|[*_~`&("'](?=\S)(?![*_~`]{2}))/u;
/** Left literal in rendered text: an opener that a later line could close (an intraword `_` cannot). */
const OPEN = /[*_~`[\]<>|]/;
const INTRAWORD_UNDERSCORE = /(?<=[\p{L}\p{N}])_+(?=[\p{L}\p{N}])/gu;

/**
 * Text markdown leaves as it is: it starts with a letter (no block can start), holds only
 * letters, digits, spaces and `, . ; ! ? ' " ( ) -` (no emphasis, code, link, HTML, entity,
 * escape or line break; no `:` or `@`, so no autolink but a `www.` one, excluded), and does not
 * end in a space (a hard break). Such a run is one paragraph of one plain span.
 */
const PLAIN_TEXT = /^[A-Za-z][A-Za-z0-9 ,.;!?'"()-]*$/;
const WWW = /www\./i;

/** `[{ text: raw }]` when `raw` is plain text (see PLAIN_TEXT): what lexing it gives, without the lexer. Else null. */
export function plainSpans(raw: string): Span[] | null {
  return PLAIN_TEXT.test(raw) && raw.charCodeAt(raw.length - 1) !== 0x20 && !WWW.test(raw) ? [{ text: raw }] : null;
}

/** Spans of a run of complete lines that nothing after them can change, or null. */
function closedSpans(raw: string): Span[] | null {
  const plain = plainSpans(raw);
  if (plain) return plain; // the committed words of a line of prose, most frames
  const text = sanitize(raw);
  if (/[\s\\]$/.test(text)) return null; // a trailing space or backslash makes a hard break with the next line
  const spans = paragraphSpans(text);
  if (!spans) return null;
  for (const span of spans) {
    if (span.tone === 'code' || span.tone === 'link' || span.tone === 'muted') continue; // code, a link and its address
    if (OPEN.test(span.text.replace(INTRAWORD_UNDERSCORE, ''))) return null;
  }
  return spans;
}

/** Wrap `spans` on from the pending line (joined by a soft break): only the new text is tokenized. */
function resume(state: ParagraphTail, spans: readonly Span[], w: number): Line[] {
  return state.pending ? wrapSpans([SOFT_BREAK, ...spans], w, { after: state.pending }) : wrapSpans(spans, w);
}

const LETTER_AT = /\p{L}/uy;
const NOT_SPACE_AT = /\S/uy;
const ESCAPE = /[\x1b\x9b]/;

/**
 * Word commits: the text from `done` up to the last single space between a non-space and a
 * letter in the growing line is committed like a run of lines when it is closed (`closedSpans`)
 * and starts a paragraph line where it starts one. Sound for the same reasons as a line commit:
 * the space is a plain space either way (the soft break's `' '`), nothing in the committed text
 * is left open for later text to close, and the rest starts with a letter, so it neither starts
 * a block nor changes how a delimiter next to the cut flanks. Whatever the rest turns out to
 * be, it is lexed alone each frame and, when it is not a paragraph, the caller renders the
 * whole region in full. Text with an escape character is not cut (sanitize could join across).
 */
function commitWords(state: ParagraphTail, region: string, w: number): void {
  const from = Math.max(state.done, state.scan);
  let cut = -1;
  for (let i = region.lastIndexOf(' '); i > from; i = region.lastIndexOf(' ', i - 1)) {
    LETTER_AT.lastIndex = i + 1;
    NOT_SPACE_AT.lastIndex = i - 1;
    if (LETTER_AT.test(region) && NOT_SPACE_AT.test(region)) { cut = i; break; }
  }
  if (cut === -1) return;
  const raw = region.slice(state.done, cut);
  if (ESCAPE.test(raw)) return;
  // A segment starting on this line: its start is checked with its characters known (` x` stands for the rest).
  if (state.done === state.scan && !PLAIN_START.test(`${sanitize(raw)} x`)) return;
  const spans = closedSpans(raw);
  if (!spans) return;
  const lines = resume(state, spans, w);
  for (let i = 0; i < lines.length - 1; i++) state.frozen.push(lines[i]!);
  state.pending = lines[lines.length - 1]!;
  state.done = cut + 1;
}

export function paragraphTailLines(state: ParagraphTail, region: string, width: number): Line[] | null {
  if (state.unsafe) return null;
  const w = Math.max(4, width); // as markdownLines
  for (let end = region.indexOf('\n', state.scan); end !== -1; end = region.indexOf('\n', state.scan)) {
    const line = region.slice(state.scan, end);
    if (state.done > state.scan) {
      // The line holding a word commit: its start was checked before (the segment goes on from the cut).
    } else if (state.scan === state.done) {
      // Only the region's first line starts a segment unchecked (later ones were checked before the commit).
      if (!PLAIN_START.test(sanitize(line))) { state.unsafe = true; return null; }
    } else if (PLAIN_START.test(sanitize(line))) {
      // The held lines are followed by a line that only continues the paragraph: commit them if closed.
      const spans = closedSpans(region.slice(state.done, state.scan - 1));
      if (spans) {
        const lines = resume(state, spans, w);
        for (let i = 0; i < lines.length - 1; i++) state.frozen.push(lines[i]!);
        state.pending = lines[lines.length - 1]!;
        state.done = state.scan;
      }
    }
    state.scan = end + 1;
  }
  commitWords(state, region, w);
  const open = region.slice(state.done);
  if (open === '') return state.pending ? [...state.frozen, state.pending] : null;
  if (state.scan === state.done && !PLAIN_START.test(sanitize(open))) return null;
  const spans = paragraphSpans(sanitize(open));
  if (!spans) return null;
  const lines = resume(state, spans, w);
  return state.frozen.length === 0 ? lines : [...state.frozen, ...lines];
}
