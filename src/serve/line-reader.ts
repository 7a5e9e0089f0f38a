/**
 * Splits a byte stream into lines with a length cap (docs/serve.md#limits). Bytes are kept
 * only up to the cap: a longer line is dropped as it arrives (its bytes are not buffered),
 * reported once through `onOversize` when it ends, and reading goes on with the next line.
 * Lines are decoded as UTF-8 (a malformed sequence becomes U+FFFD, which JSON parsing then
 * judges). A trailing line without its newline is never delivered (a truncated line is not a
 * message).
 */
export interface LineReader {
  push(chunk: Buffer): void;
  /** Bytes held for the line being read (at most the cap). */
  readonly buffered: number;
}

export function createLineReader(options: { maxBytes: number; onLine: (line: string) => void; onOversize: (bytes: number) => void }): LineReader {
  let parts: Buffer[] = [];
  let held = 0;
  /** Bytes of the current line dropped because it passed the cap (-1: not dropping). */
  let dropped = -1;

  const finishLine = (tail: Buffer): void => {
    if (dropped >= 0) {
      const total = dropped + tail.length;
      dropped = -1;
      options.onOversize(total);
      return;
    }
    if (held + tail.length > options.maxBytes) {
      const total = held + tail.length;
      parts = [];
      held = 0;
      options.onOversize(total);
      return;
    }
    const whole = parts.length === 0 ? tail : Buffer.concat([...parts, tail]);
    parts = [];
    held = 0;
    const text = whole.toString('utf8');
    options.onLine(text.endsWith('\r') ? text.slice(0, -1) : text);
  };

  const keep = (piece: Buffer): void => {
    if (piece.length === 0) return;
    if (dropped >= 0) {
      dropped += piece.length;
      return;
    }
    if (held + piece.length > options.maxBytes) {
      dropped = held + piece.length;
      parts = [];
      held = 0;
      return;
    }
    // Copy: the chunk's buffer may be reused by the stream.
    parts.push(Buffer.from(piece));
    held += piece.length;
  };

  return {
    push(chunk) {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(10, start);
        if (nl < 0) {
          keep(chunk.subarray(start));
          return;
        }
        finishLine(chunk.subarray(start, nl));
        start = nl + 1;
      }
    },
    get buffered() {
      return held;
    },
  };
}
