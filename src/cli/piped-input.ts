import { LegionError } from '../errors';

/** Bytes of piped input sent to the model; the rest is counted and cut (docs/cli-conventions.md). */
export const PIPED_INPUT_MAX_BYTES = 256 * 1024;
/** Past this many bytes Legion stops reading (`yes | legion run …` must end). */
export const PIPED_INPUT_READ_CEILING = 64 * 1024 * 1024;
/** After this long without a byte or the end of input, say on stderr what Legion is waiting for. */
export const PIPED_INPUT_WAIT_NOTE_MS = 3000;

export interface PipedInput {
  /** The kept text (at most `maxBytes` bytes, cut on a character boundary). */
  readonly text: string;
  /** Bytes read in all (stops growing at the ceiling). */
  readonly totalBytes: number;
  /** True when `text` is not everything that was piped. */
  readonly cut: boolean;
  /** True when reading stopped at the ceiling, before the end of input. */
  readonly overCeiling: boolean;
}

export interface ReadPipedOptions {
  readonly maxBytes?: number;
  readonly ceiling?: number;
  /** Called once when nothing (no byte, no end) arrived for `waitNoteMs`. */
  readonly onWaiting?: () => void;
  readonly waitNoteMs?: number;
}

/**
 * Read piped standard input to its end: keep the first `maxBytes` bytes, count the rest
 * (memory stays bounded), stop at `ceiling`. Input holding a NUL byte is binary: refused
 * with a usage error, since it cannot be shown to a model as text.
 */
export async function readPipedInput(stream: AsyncIterable<Uint8Array | string>, options: ReadPipedOptions = {}): Promise<PipedInput> {
  const maxBytes = options.maxBytes ?? PIPED_INPUT_MAX_BYTES;
  const ceiling = options.ceiling ?? PIPED_INPUT_READ_CEILING;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let total = 0;
  let overCeiling = false;
  const timer = options.onWaiting ? setTimeout(options.onWaiting, options.waitNoteMs ?? PIPED_INPUT_WAIT_NOTE_MS) : undefined;
  timer?.unref?.();
  try {
    for await (const chunk of stream) {
      clearTimeout(timer);
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      total += bytes.length;
      if (keptBytes < maxBytes) {
        const take = bytes.subarray(0, maxBytes - keptBytes);
        kept.push(take);
        keptBytes += take.length;
      }
      if (total >= ceiling) {
        overCeiling = true;
        break;
      }
    }
  } finally {
    clearTimeout(timer);
  }
  let buffer = Buffer.concat(kept);
  if (buffer.includes(0)) {
    throw new LegionError('piped input looks binary (it holds NUL bytes): pipe text instead (e.g. through `strings` or `xxd`)', 2);
  }
  const cut = total > buffer.length;
  if (cut) buffer = buffer.subarray(0, characterBoundary(buffer));
  return { text: buffer.toString('utf8'), totalBytes: total, cut, overCeiling };
}

/** The length of `buffer` without a UTF-8 sequence cut short at its end. */
function characterBoundary(buffer: Buffer): number {
  const end = buffer.length;
  let start = end;
  while (start > 0 && (buffer[start - 1]! & 0xc0) === 0x80) start--;
  if (start === 0) return end;
  const lead = buffer[start - 1]!;
  if (lead < 0xc0) return end;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  return end - (start - 1) >= length ? end : start - 1;
}

/** "1,234 bytes" / "over 67,108,864 bytes" */
function sizeOf(input: PipedInput): string {
  return `${input.overCeiling ? 'over ' : ''}${input.totalBytes.toLocaleString('en-US')} bytes`;
}

/** A Markdown fence longer than any run of backticks in `text`. */
function fenceFor(text: string): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

/** The note for stderr when piped input was cut, or null. */
export function cutNote(input: PipedInput): string | null {
  if (!input.cut) return null;
  return `piped input was ${sizeOf(input)}; only the first ${Buffer.byteLength(input.text).toLocaleString('en-US')} bytes were sent (the model is told it was cut)`;
}

/** The piped input as a fenced block under a header with its size (and a note when cut). */
export function attachmentBlock(input: PipedInput): string {
  const kept = Buffer.byteLength(input.text);
  const header = input.cut
    ? `Piped input (${sizeOf(input)}; only the first ${kept.toLocaleString('en-US')} bytes are shown, the rest was cut):`
    : `Piped input (${sizeOf(input)}):`;
  const fence = fenceFor(input.text);
  const body = input.text.endsWith('\n') ? input.text : `${input.text}\n`;
  return `${header}\n${fence}\n${body}${fence}`;
}

/**
 * The message `legion run` sends. `words` are the command's positionals; `piped` is the
 * piped input, or null when stdin is a terminal (never read) or absent.
 * - words and piped input: the words, then the input attached as a fenced block;
 * - `-` alone, or no words: the piped input is the message (with a note when cut);
 * - otherwise the words alone.
 */
export function composeRunMessage(words: readonly string[], piped: PipedInput | null): string {
  const fromStdin = words.length === 0 || (words.length === 1 && words[0] === '-');
  if (words.includes('-') && !fromStdin) {
    throw new LegionError('"-" reads the message from stdin and comes alone: legion run - < file, or legion run "question" < file to attach it', 2);
  }
  if (fromStdin) {
    if (words.length === 1 && piped === null) throw new LegionError('legion run -: stdin is a terminal; pipe the message in, e.g. legion run - < prompt.md', 2);
    const text = piped?.text.trim() ?? '';
    if (!text) throw new LegionError('legion run needs a message: an argument (legion run "summarize README.md") or piped input', 2);
    return piped!.cut ? `${piped!.text}\n\n(Piped input was ${sizeOf(piped!)}; the rest after ${Buffer.byteLength(piped!.text).toLocaleString('en-US')} bytes was cut.)` : piped!.text;
  }
  const message = words.join(' ').trim();
  if (!message) throw new LegionError('legion run needs a message, e.g. legion run "summarize README.md"', 2);
  if (!piped || piped.totalBytes === 0) return message;
  return `${message}\n\n${attachmentBlock(piped)}`;
}
