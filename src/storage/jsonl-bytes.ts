import type { JsonlIssue, JsonlRead } from './jsonl';

type Validate<T> = (value: unknown) => { ok: true; value: T } | { ok: false; error: string };

/** Bytes decoded at once: well under V8's large-object size (~128 kB). */
const PIECE_BYTES = 48 * 1024;

/** What `JsonlByteParser.end` returns: `parseJsonl`'s result plus where the file's last newline is. */
export interface JsonlBytesRead<T> extends JsonlRead<T> {
  /** Bytes fed in. */
  readonly bytes: number;
  /** Bytes up to and including the last newline (0 when there is none). */
  readonly completeBytes: number;
}

/**
 * `parseJsonl` for a file fed as bytes, in chunks of any size: the same records and issues as
 * `parseJsonl(wholeText)`, without ever holding the whole file, as bytes or as one string.
 * That matters when a long run is resumed: a file-sized Buffer or string outlives the parse
 * until V8's next full GC (megabytes per session file, counted in RSS); pieces of about
 * 48 kB, and their lines, are short-lived young objects. Chunks may be reused by the caller
 * after `push` returns. UTF-8 never uses the newline byte inside a character, so cutting at
 * newlines decodes exactly as the whole text does.
 */
export interface JsonlByteParser<T> {
  push(chunk: Uint8Array): void;
  end(): JsonlBytesRead<T>;
}

export function createJsonlByteParser<T>(file: string, validate?: Validate<T>): JsonlByteParser<T> {
  const records: T[] = [];
  const issues: JsonlIssue[] = [];
  // A line that did not parse is torn only if no non-empty line follows it: held until known.
  let held: { line: number; error: unknown } | null = null;
  let lineNo = 0;
  let total = 0;
  let lastNewline = -1;
  /** Bytes after the last newline seen (a line not complete yet), copied, in the chunks they came in. */
  let partial: Buffer[] = [];

  const take = (line: string): void => {
    lineNo++;
    if (line.trim() === '') return;
    if (held) {
      issues.push({ file, line: held.line, kind: 'invalid', message: `${file}:${held.line}: not valid JSON: ${(held.error as Error).message}` });
      held = null;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      held = { line: lineNo, error };
      return;
    }
    if (!validate) {
      records.push(value as T);
      return;
    }
    const result = validate(value);
    if (result.ok) records.push(result.value);
    else issues.push({ file, line: lineNo, kind: 'invalid', message: `${file}:${lineNo}: ${result.error}` });
  };

  /** Decode and take the complete lines of `bytes` (which ends with a newline), piece by piece. */
  const takeLines = (bytes: Buffer): void => {
    let start = 0;
    while (start < bytes.length) {
      let end = Math.min(bytes.length, start + PIECE_BYTES);
      if (end < bytes.length) {
        const nl = bytes.lastIndexOf(0x0a, end - 1);
        end = nl >= start ? nl + 1 : bytes.indexOf(0x0a, end) + 1;
      }
      const lines = bytes.toString('utf8', start, end).split('\n');
      for (let i = 0; i < lines.length - 1; i++) take(lines[i]!); // the last is the '' after the piece's final newline
      start = end;
    }
  };

  return {
    push(chunk) {
      if (chunk.length === 0) return;
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const nl = bytes.lastIndexOf(0x0a);
      if (nl >= 0) lastNewline = total + nl;
      total += bytes.length;
      if (nl < 0) {
        partial.push(Buffer.from(bytes));
        return;
      }
      takeLines(partial.length > 0 ? Buffer.concat([...partial, bytes.subarray(0, nl + 1)]) : bytes.subarray(0, nl + 1));
      partial = nl + 1 < bytes.length ? [Buffer.from(bytes.subarray(nl + 1))] : [];
    },
    end() {
      if (partial.length > 0) take(Buffer.concat(partial).toString('utf8'));
      partial = [];
      if (held) {
        const { line } = held;
        const endsClean = total > 0 && lastNewline === total - 1;
        issues.push({ file, line, kind: 'torn', message: `${file}:${line}: dropped a torn last line${endsClean ? '' : ' (no final newline)'}` });
        held = null;
      }
      return { records, issues, bytes: total, completeBytes: lastNewline + 1 };
    },
  };
}

/** `parseJsonl(bytes.toString('utf8'), file, validate)` without a string of the whole file (see `createJsonlByteParser`). */
export function parseJsonlBytes<T>(bytes: Uint8Array, file: string, validate?: Validate<T>): JsonlBytesRead<T> {
  const parser = createJsonlByteParser(file, validate);
  for (let start = 0; start < bytes.length; start += PIECE_BYTES) parser.push(bytes.subarray(start, start + PIECE_BYTES));
  return parser.end();
}
