import { openSync, closeSync, writeSync, mkdirSync, fstatSync, readSync, ftruncateSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-mode';
import { surelyAbsent } from './absent';

/** A problem found while reading a JSONL file. `torn` = the last line was cut mid-write. */
export interface JsonlIssue {
  readonly file: string;
  readonly line: number;
  readonly kind: 'torn' | 'invalid';
  readonly message: string;
}

export interface JsonlRead<T> {
  readonly records: T[];
  readonly issues: JsonlIssue[];
}

/**
 * Append records to a JSONL file, one `write` of whole lines, so a crash leaves at worst
 * one torn last line. Synchronous on purpose: appends from concurrent sessions of one
 * process can never interleave, and the cost is independent of the file's length.
 * A new file is private (0600), in folders created private (0700).
 * When the file ends in a torn line (no final newline), the new lines start on a line of
 * their own, so the fragment stays one broken line and the new records are not lost.
 */
export function appendJsonl(path: string, ...records: unknown[]): void {
  if (records.length === 0) return;
  const data = linesOf(records);
  let fd: number;
  try {
    fd = openSync(path, 'a+', PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
    fd = openSync(path, 'a+', PRIVATE_FILE_MODE);
  }
  try {
    writeSync(fd, endsTorn(fd) ? '\n' + data : data);
  } finally {
    closeSync(fd);
  }
}

function linesOf(records: readonly unknown[]): string {
  return records.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

/** True when the file behind `fd` is non-empty and does not end with a newline. */
function endsTorn(fd: number): boolean {
  const size = fstatSync(fd).size;
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

/** An append handle that keeps its file descriptor open (for hot files like the ledger). */
export interface JsonlAppender {
  append(...records: unknown[]): void;
  close(): void;
}

export function openJsonlAppender(path: string): JsonlAppender {
  mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
  let fd: number | null = openSync(path, 'a+', PRIVATE_FILE_MODE);
  let torn = endsTorn(fd);
  return {
    append(...records) {
      if (fd === null || records.length === 0) return;
      const data = linesOf(records);
      writeSync(fd, torn ? '\n' + data : data);
      torn = false;
    },
    close() {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}

/**
 * Make an append-only file safe to append to after a crash: bytes after the last newline that
 * do not parse as JSON (a torn last line) are cut off and reported; a last line that parses
 * but lacks its newline gets one. Only bytes that were never a complete line are removed.
 * Reads from the end (cost independent of the file's length). Missing file = nothing to do.
 * The caller must be the file's only writer (e.g. holds the run lock).
 */
export function dropTornTail(path: string): JsonlIssue | null {
  let fd: number;
  // A new run's ledger: nothing to open, and no error thrown for it.
  if (surelyAbsent(path)) return null;
  try {
    fd = openSync(path, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return null;
    // Find the last newline, reading backwards.
    let end = size;
    let lastNewline = -1;
    const chunk = Buffer.alloc(64 * 1024);
    while (end > 0 && lastNewline < 0) {
      const start = Math.max(0, end - chunk.length);
      const n = readSync(fd, chunk, 0, end - start, start);
      const at = chunk.subarray(0, n).lastIndexOf(0x0a);
      if (at >= 0) lastNewline = start + at;
      end = start;
    }
    const tailStart = lastNewline + 1;
    if (tailStart === size) return null;
    const tail = Buffer.alloc(size - tailStart);
    readSync(fd, tail, 0, tail.length, tailStart);
    const text = tail.toString('utf8');
    if (text.trim() === '') return null;
    try {
      JSON.parse(text);
      writeSync(fd, '\n', size);
      return null;
    } catch {
      ftruncateSync(fd, tailStart);
      return { file: path, line: 0, kind: 'torn', message: `${path}: dropped a torn last line (${tail.length} bytes, cut mid-write)` };
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Parse JSONL text. A last line that does not parse (or has no final newline and does not
 * parse) is a torn write: dropped and reported as `torn`. Any other line that does not
 * parse, or that `validate` rejects, is reported as `invalid` with its line number and
 * skipped; the rest are kept. Blank lines are ignored.
 */
export function parseJsonl<T>(text: string, file: string, validate?: (value: unknown) => { ok: true; value: T } | { ok: false; error: string }): JsonlRead<T> {
  const records: T[] = [];
  const issues: JsonlIssue[] = [];
  const lines = text.split('\n');
  const endsClean = text.endsWith('\n');
  // Index of the last non-empty line.
  let lastIndex = lines.length - 1;
  while (lastIndex >= 0 && lines[lastIndex]!.trim() === '') lastIndex--;
  for (let i = 0; i <= lastIndex; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      if (i === lastIndex) {
        issues.push({ file, line: i + 1, kind: 'torn', message: `${file}:${i + 1}: dropped a torn last line${endsClean ? '' : ' (no final newline)'}` });
      } else {
        issues.push({ file, line: i + 1, kind: 'invalid', message: `${file}:${i + 1}: not valid JSON: ${(error as Error).message}` });
      }
      continue;
    }
    if (validate) {
      const result = validate(value);
      if (!result.ok) {
        issues.push({ file, line: i + 1, kind: 'invalid', message: `${file}:${i + 1}: ${result.error}` });
        continue;
      }
      records.push(result.value);
    } else {
      records.push(value as T);
    }
  }
  return { records, issues };
}

/** Read a JSONL file (missing file = empty). See `parseJsonl` for the tolerance contract. */
export async function readJsonl<T = unknown>(path: string, validate?: Parameters<typeof parseJsonl<T>>[2]): Promise<JsonlRead<T>> {
  if (surelyAbsent(path)) return { records: [], issues: [] };
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], issues: [] };
    throw error;
  }
  return parseJsonl(text, path, validate);
}
