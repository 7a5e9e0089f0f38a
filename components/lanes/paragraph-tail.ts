import type { Line, Span } from '../text/line';
import { wrapSpans } from '../text/wrap';
import { paragraphSpans } from '../markdown/markdown-lines';
import { sanitize } from '../text/ansi';

/**
 * The growing last paragraph of a streamed message, rendered incrementally.
 *
 * A streamed message's text after its last paragraph break (line-source.ts) grows by appends
 * and was lexed and wrapped in full on every frame. When it is a plain paragraph (every source
 * line starts with a letter or a digit that opens no list, and every complete line is closed:
 * no unmatched `*` `_` `~` or backtick, no `[` `]` `<` `>` `|`, no trailing space or backslash,
 * which make hard breaks), its lines are those of wrapping the spans of each source line
 * joined by one space (a soft break). Wrapping is greedy, so only the last output line of the
 * complete source lines can still change: the lines before it are kept (`frozen`, the same
 * objects every frame: their rows are not re-rendered nor re-measured) and wrapping resumes
 * from that last line. Per frame: the growing source line only.
 *
 * Contract: `paragraphTailLines` returns exactly `markdownLines(sanitize(region), width)`, or
 * null when the region is not such a paragraph (the caller then renders it in full);
 * test/tui/stream-tail.test.tsx compares every frame of long streams with a fresh render.
 */
export interface ParagraphTail {
  /** Offset in the raw region just after the last complete source line taken in (its '\n' included). */
  done: number;
  /** Output lines that can no longer change. */
  readonly frozen: Line[];
  /** The last output line of the complete source lines: wrapping resumes from it (null before the first). */
  pending: Line | null;
  /** A complete line is not plain: this region is rendered in full from now on. */
  unsafe: boolean;
}

export function newParagraphTail(): ParagraphTail {
  return { done: 0, frozen: [], pending: null, unsafe: false };
}

const SOFT_BREAK: Span = { text: ' ' };
/**
 * A line that can only continue a paragraph: a letter; a digit not starting `1.` / `1)` (a
 * list); or an inline opener (`**`, `_`, `~~`, a backtick, `&`, a bracket or quote) followed by
 * text, never a list bullet (`* `), a rule (`***`, `_ _ _`) or a fence (three backticks or tildes).
 */
const PLAIN_START = /^(?:\p{L}|\d(?!\d*[.)])|[*_~`&("'](?=\S)(?![*_~`]{2}))/u;
/** Links, references, HTML, autolinks in angle brackets, tables. */
const STRUCTURE = /[[\]<>|]/;
/** A delimiter left literal in a line: it could pair with one in a later line. */
const OPEN_DELIMITER = /[*_~`]/;

/** Spans of a complete source line, or null when it is not plain and closed. */
function closedLineSpans(raw: string): Span[] | null {
  const line = sanitize(raw);
  if (!PLAIN_START.test(line) || /[\s\\]$/.test(line) || STRUCTURE.test(line)) return null;
  const spans = paragraphSpans(line);
  if (!spans) return null;
  for (const span of spans) if (span.tone !== 'code' && OPEN_DELIMITER.test(span.text)) return null;
  return spans;
}

/** Spans of the growing line (anything after it may still close what it opens), or null. */
function growingLineSpans(raw: string): Span[] | null {
  const line = sanitize(raw);
  if (!PLAIN_START.test(line)) return null;
  return paragraphSpans(line);
}

export function paragraphTailLines(state: ParagraphTail, region: string, width: number): Line[] | null {
  if (state.unsafe) return null;
  const w = Math.max(4, width); // as markdownLines
  for (let end = region.indexOf('\n', state.done); end !== -1; end = region.indexOf('\n', state.done)) {
    const spans = closedLineSpans(region.slice(state.done, end));
    if (!spans) {
      state.unsafe = true;
      return null;
    }
    const lines = wrapSpans(state.pending ? [...state.pending, SOFT_BREAK, ...spans] : spans, w);
    for (let i = 0; i < lines.length - 1; i++) state.frozen.push(lines[i]!);
    state.pending = lines[lines.length - 1]!;
    state.done = end + 1;
  }
  const growing = region.slice(state.done);
  if (growing === '') return state.pending ? [...state.frozen, state.pending] : null;
  const spans = growingLineSpans(growing);
  if (!spans) return null;
  const lines = wrapSpans(state.pending ? [...state.pending, SOFT_BREAK, ...spans] : spans, w);
  return state.frozen.length === 0 ? lines : [...state.frozen, ...lines];
}
