/**
 * A faster `get()` for Ink's `Output` (the screen buffer Ink rebuilds on every frame).
 *
 * Ink 6.8 builds each frame from scratch: a cell object for every cell of the screen (7,680 at
 * 160×48), every written line tokenized into styled characters, and every row turned back
 * into a string by diffing the styles of each pair of neighbouring cells (three Sets per
 * cell). That is ~5 ms per frame at 160×48 whatever changed, most of a streaming frame.
 *
 * This replacement produces the same string, byte for byte (test/tui/ink-output.test.ts
 * compares it with Ink's own on many screens), by the same steps, but:
 * - per row: a row whose writes (position and text) are the same as in one of the last two
 *   frames reuses that row's string, so a frame costs its changed rows only;
 * - a row that changed reuses the styled characters of lines already seen, and skips the
 *   style diff between neighbours with the same styles (the diff of equal styles is empty).
 * Caches keep the last two frames and the last 64 rows and lines dropped from them (memory is
 * bounded by two screens and 64 rows).
 *
 * It is installed on Ink's Output class (`installInkOutputCache`, called before the first
 * render), and only when Ink's class has the shape this was written for and a probe frame
 * comes out identical; otherwise Ink's own `get()` stays.
 */
import Output from '../../node_modules/ink/build/output.js';
import sliceAnsi from 'slice-ansi';
import stringWidth from 'string-width';
import { ansiCodesToString, diffAnsiCodes, reduceAnsiCodesIncremental, styledCharsFromTokens, tokenize } from '@alcalzone/ansi-tokenize';

type StyledChar = ReturnType<typeof styledCharsFromTokens>[number];
type AnsiCode = StyledChar['styles'][number];
type Transformer = (line: string, index: number) => string;
interface Clip { x1?: number; x2?: number; y1?: number; y2?: number }
type Operation =
  | { type: 'write'; x: number; y: number; text: string; transformers: Transformer[] }
  | { type: 'clip'; clip: Clip }
  | { type: 'unclip' };
/** The fields of Ink's Output this relies on (private in its typings). */
interface OutputFields { width: number; height: number; operations: Operation[] }
type GetResult = { output: string; height: number };

const NO_STYLES: AnsiCode[] = [];
const BLANK: StyledChar = { type: 'char', value: ' ', fullWidth: false, styles: NO_STYLES } as StyledChar;

/**
 * Two-generation cache: entries used in this frame or the previous one survive; of the others,
 * the last `keep` dropped stay too (a spinner's row comes back every spinner cycle: its ten
 * frames' rows are built once, not ~8 times a second for as long as an agent works).
 */
class FrameCache<V> {
  private current = new Map<string, V>();
  private previous = new Map<string, V>();
  private readonly older = new Map<string, V>();
  constructor(private readonly keep: number) {}
  get(key: string): V | undefined {
    let value = this.current.get(key);
    if (value === undefined) {
      value = this.previous.get(key);
      if (value === undefined) {
        value = this.older.get(key);
        if (value !== undefined) this.older.delete(key);
      }
      if (value !== undefined) this.current.set(key, value);
    }
    return value;
  }
  set(key: string, value: V): void {
    this.current.set(key, value);
  }
  /** Drop every entry. */
  clear(): void {
    this.current.clear();
    this.previous.clear();
    this.older.clear();
  }
  /** Start a frame: what the frame before last used (and the last did not) joins the older ones. */
  turn(): void {
    for (const [key, value] of this.previous) {
      if (this.current.has(key)) continue;
      this.older.delete(key);
      this.older.set(key, value);
    }
    for (const key of this.older.keys()) {
      if (this.older.size <= this.keep) break;
      this.older.delete(key);
    }
    this.previous = this.current;
    this.current = new Map();
  }
}

/** Rows kept beyond two frames: a few screens' worth of changing rows (spinners, a clock). */
const rows = new FrameCache<string>(64);
const styled = new FrameCache<StyledChar[]>(64);
/** Widths of single characters (graphemes); the set of characters on screens is small. */
const charWidths = new Map<string, number>();
const MAX_CHAR_WIDTHS = 10_000;

function charWidth(value: string): number {
  let w = charWidths.get(value);
  if (w === undefined) {
    if (charWidths.size >= MAX_CHAR_WIDTHS) charWidths.clear();
    w = stringWidth(value);
    charWidths.set(value, w);
  }
  return w;
}

function styledChars(line: string): StyledChar[] {
  let chars = styled.get(line);
  if (chars === undefined) {
    chars = grown(line) ?? tokenized(line);
    styled.set(line, chars);
    recent[recentNext] = line;
    recentNext = (recentNext + 1) % RECENT;
  }
  return chars;
}

/**
 * The characters of a simple line: printable ASCII, and symbols a screen draws (the middle dot,
 * dashes, bullets, the ellipsis, primes and angle quotes, arrows, box drawing, blocks,
 * geometric shapes but the two wide ones) — each a grapheme of its own that joins no neighbour (none is a combining mark,
 * joiner, prepended or Hangul character), one column wide, not a full-width code point
 * (test/tui/ink-output.test.ts checks each against ansi-tokenize).
 */
const SIMPLE_CHARS = '\\x20-\\x7e\\u00b7\\u2010-\\u2027\\u2030-\\u205e\\u2190-\\u21ff\\u2500-\\u25fc';
/** A line of simple characters and whole SGR sequences only (most of a screen's lines). */
const SIMPLE_LINE = new RegExp(`^(?:\\x1b\\[[0-9;]*m|[${SIMPLE_CHARS}])*$`);
const SGR_RUN_OR_TEXT = new RegExp(`(?:\\x1b\\[[0-9;]*m)+|[${SIMPLE_CHARS}]+`, 'g');
/** The unstyled styled character of each printable ASCII code, shared (nothing here mutates one). */
const PLAIN_ASCII: StyledChar[] = [];
for (let c = 0x20; c <= 0x7e; c++) PLAIN_ASCII[c] = { type: 'char', value: String.fromCharCode(c), fullWidth: false, styles: NO_STYLES } as StyledChar;

/**
 * `styledCharsFromTokens(tokenize(line))`, equal (test/tui/ink-output.test.ts compares them),
 * without a token per character when the line is simple characters and whole SGR sequences: each
 * run of sequences is tokenized by ansi-tokenize and reduced into the active styles as it does
 * (one code after another), and each character of a text run gets those styles (one array per
 * run, not a copy per character; unstyled ASCII characters are shared objects). Any other
 * line: ansi-tokenize.
 */
export function tokenized(line: string): StyledChar[] {
  if (!SIMPLE_LINE.test(line)) return styledCharsFromTokens(tokenize(line));
  const out: StyledChar[] = [];
  let styles: AnsiCode[] = NO_STYLES;
  for (const [run] of line.matchAll(SGR_RUN_OR_TEXT)) {
    if (run.charCodeAt(0) === 0x1b) {
      styles = reduceAnsiCodesIncremental(styles, tokenize(run) as AnsiCode[]);
      if (styles.length === 0) styles = NO_STYLES;
      continue;
    }
    if (styles === NO_STYLES) {
      for (let i = 0; i < run.length; i++) {
        const c = run.charCodeAt(i);
        out.push(c < 0x7f ? PLAIN_ASCII[c]! : ({ type: 'char', value: run[i]!, fullWidth: false, styles } as StyledChar));
      }
    } else {
      for (let i = 0; i < run.length; i++) out.push({ type: 'char', value: run[i]!, fullWidth: false, styles } as StyledChar);
    }
  }
  return out;
}

/** The last lines tokenized (a row that grows, as a streamed line does, is one of them plus its new text). */
const RECENT = 8;
const recent: string[] = [];
let recentNext = 0;
const PRINTABLE_ASCII = /^[\x20-\x7e]$/;
const WHOLE_SGR = /^\x1b\[[0-9;]*m[\x20-\x7e]/;

/**
 * The styled characters of `line` when it is a recently tokenized line `c` plus more: `c`'s
 * characters (cached) and those of the rest, tokenized alone. The same as tokenizing the whole
 * line only when nothing crosses the cut, so `c` must end clean: with a printable ASCII
 * character (no grapheme joins it to the next one, which must be printable ASCII or ESC), after
 * its last escape sequence, which is a whole SGR sequence (no sequence runs across the cut), and
 * with no style active (the rest starts from none, as a fresh line does). Else null.
 */
function grown(line: string): StyledChar[] | null {
  for (let i = 0; i < recent.length; i++) {
    const c = recent[(recentNext - 1 - i + RECENT) % RECENT];
    if (c === undefined || c.length === 0 || c.length >= line.length || !line.startsWith(c)) continue;
    const head = styled.get(c);
    if (head === undefined || head.length === 0 || head[head.length - 1]!.styles.length !== 0) continue;
    if (!PRINTABLE_ASCII.test(c[c.length - 1]!) || c.includes('\x9b')) continue;
    const first = line.charCodeAt(c.length);
    if (!(first === 0x1b || (first >= 0x20 && first <= 0x7e))) continue;
    const esc = c.lastIndexOf('\x1b');
    if (esc !== -1 && !WHOLE_SGR.test(c.slice(esc))) continue;
    return head.concat(tokenized(line.slice(c.length)));
  }
  return null;
}

function sameStyles(a: readonly AnsiCode[], b: readonly AnsiCode[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.code !== b[i]!.code) return false;
  return true;
}

/** `styledCharsToString` of ansi-tokenize, skipping the (empty) diff between equal styles. */
function charsToString(chars: readonly StyledChar[]): string {
  let out = '';
  let prev: AnsiCode[] = NO_STYLES;
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (i === 0) out += ansiCodesToString(ch.styles);
    else if (!sameStyles(prev, ch.styles)) out += ansiCodesToString(diffAnsiCodes(prev, ch.styles));
    out += ch.value;
    prev = ch.styles;
  }
  if (chars.length > 0 && prev.length > 0) out += ansiCodesToString(diffAnsiCodes(prev, []));
  return out;
}

let rowsBuilt = 0;

/** Rows built (not found in the caches) since the process started: for tests of the caching. */
export function rowsBuiltSoFar(): number {
  return rowsBuilt;
}

/** One row from its writes (`[x, line, x, line, …]`), as Ink's `get()` builds it. */
function buildRow(width: number, writes: readonly (number | string)[]): string {
  rowsBuilt += 1;
  const cells: (StyledChar | undefined)[] = new Array<StyledChar>(width).fill(BLANK);
  for (let w = 0; w < writes.length; w += 2) {
    let offsetX = writes[w] as number;
    for (const ch of styledChars(writes[w + 1] as string)) {
      cells[offsetX] = ch;
      const cw = Math.max(1, charWidth(ch.value));
      for (let k = 1; k < cw; k++) cells[offsetX + k] = { type: 'char', value: '', fullWidth: false, styles: ch.styles } as StyledChar;
      offsetX += cw;
    }
  }
  // Ink drops holes (a write past the end) before joining.
  const dense = cells.filter((c): c is StyledChar => c !== undefined);
  return charsToString(dense).trimEnd();
}

const blockWidths = new Map<string, number>();

/**
 * Empty the caches of rows, characters and widths, and the count of rows built: the snapshot
 * build's warm-up render (components/warm-render.tsx) leaves none of its screen in them. The
 * patch of Ink's output stays installed.
 */
export function forgetOutputCaches(): void {
  rows.clear();
  styled.clear();
  charWidths.clear();
  blockWidths.clear();
  recent.length = 0;
  recentNext = 0;
  rowsBuilt = 0;
}

function widestLine(text: string): number {
  let w = blockWidths.get(text);
  if (w === undefined) {
    w = 0;
    for (const line of text.split('\n')) w = Math.max(w, stringWidth(line));
    blockWidths.set(text, w);
  }
  return w;
}

/** The replacement of `Output.prototype.get` (same result as Ink's). */
export function fastGet(this: OutputFields): GetResult {
  const { width, height, operations } = this;
  rows.turn();
  styled.turn();
  blockWidths.clear();
  const writes: (number | string)[][] = [];
  for (let y = 0; y < height; y++) writes.push([]);
  const clips: Clip[] = [];
  for (const operation of operations) {
    if (operation.type === 'clip') { clips.push(operation.clip); continue; }
    if (operation.type === 'unclip') { clips.pop(); continue; }
    if (operation.type !== 'write') continue;
    const { text, transformers } = operation;
    let { x, y } = operation;
    let lines = text.split('\n');
    const clip = clips.at(-1);
    if (clip) {
      const clipHorizontally = typeof clip.x1 === 'number' && typeof clip.x2 === 'number';
      const clipVertically = typeof clip.y1 === 'number' && typeof clip.y2 === 'number';
      if (clipHorizontally) {
        const w = widestLine(text);
        if (x + w < clip.x1! || x > clip.x2!) continue;
      }
      if (clipVertically) {
        if (y + lines.length < clip.y1! || y > clip.y2!) continue;
      }
      if (clipHorizontally) {
        lines = lines.map((line) => {
          const from = x < clip.x1! ? clip.x1! - x : 0;
          const w = stringWidth(line);
          const to = x + w > clip.x2! ? clip.x2! - x : w;
          return sliceAnsi(line, from, to);
        });
        if (x < clip.x1!) x = clip.x1!;
      }
      if (clipVertically) {
        const from = y < clip.y1! ? clip.y1! - y : 0;
        const to = y + lines.length > clip.y2! ? clip.y2! - y : lines.length;
        lines = lines.slice(from, to);
        if (y < clip.y1!) y = clip.y1!;
      }
    }
    let offsetY = 0;
    for (let index = 0; index < lines.length; index++) {
      const row = writes[y + offsetY];
      // A line outside the screen: Ink skips it without moving down (so the rest go too).
      if (!row) continue;
      let line = lines[index]!;
      for (const transformer of transformers) line = transformer(line, index);
      row.push(x, line);
      offsetY++;
    }
  }
  const out: string[] = [];
  for (const rowWrites of writes) {
    if (rowWrites.length === 0) { out.push(''); continue; }
    let key = `${width}`;
    for (let w = 0; w < rowWrites.length; w += 2) key += `\u0000${rowWrites[w]}\u0000${rowWrites[w + 1]}`;
    let row = rows.get(key);
    if (row === undefined) {
      row = buildRow(width, rowWrites);
      rows.set(key, row);
    }
    out.push(row);
  }
  return { output: out.join('\n'), height };
}

type OutputClass = { new (options: { width: number; height: number }): { get(): GetResult; write(x: number, y: number, text: string, o: { transformers: Transformer[] }): void; clip(c: Clip): void; unclip(): void } };

/** Ink's own `get()`, kept for tests and for the fallback. */
export const inkGet: (this: unknown) => GetResult = (Output as unknown as OutputClass).prototype.get as (this: unknown) => GetResult;

let installed: boolean | null = null;

/**
 * Put `fastGet` on Ink's Output class (once per process). Returns whether it is in place:
 * false when Ink's Output does not look like the one this was written for, or a probe frame
 * (styles, wide characters, clipping) differs from Ink's own.
 */
export function installInkOutputCache(): boolean {
  if (installed !== null) return installed;
  installed = false;
  const cls = Output as unknown as OutputClass;
  if (typeof cls !== 'function' || typeof cls.prototype.get !== 'function') return false;
  const probe = (get: (this: unknown) => GetResult): string | null => {
    try {
      const o = new cls({ width: 12, height: 3 });
      if (!Array.isArray((o as unknown as OutputFields).operations)) return null;
      o.write(0, 0, '\x1b[1mab\x1b[22m c', { transformers: [] });
      o.write(8, 0, '界x', { transformers: [(l) => `\x1b[31m${l}\x1b[39m`] });
      o.clip({ x1: 1, x2: 5, y1: 1, y2: 3 });
      o.write(0, 1, 'hello\nworld\nmore', { transformers: [] });
      o.unclip();
      return get.call(o).output;
    } catch {
      return null;
    }
  };
  const want = probe(inkGet);
  const got = probe(fastGet as (this: unknown) => GetResult);
  if (want === null || got !== want) return false;
  cls.prototype.get = fastGet as unknown as () => GetResult;
  installed = true;
  return true;
}
