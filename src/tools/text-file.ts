import { open, type FileHandle } from 'node:fs/promises';
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { locationOf, locationOfFdSync } from './fd-location';

/** Bytes looked at to decide whether a file is binary (a NUL among them = binary, like git and grep). */
export const BINARY_SNIFF_BYTES = 8192;

export function looksBinary(bytes: Buffer): boolean {
  return bytes.indexOf(0) !== -1;
}

/**
 * Open a resolved (realpath'd) path for reading without ever blocking or following a
 * symlink swapped in since the check: O_NONBLOCK (a FIFO does not hang the open),
 * O_NOFOLLOW (a symlink at the last component fails with ELOOP). Callers still check
 * `handle.stat().isFile()`.
 */
export function openForRead(absolute: string): Promise<FileHandle> {
  return open(absolute, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
}

/**
 * `openForRead`, then confirm (Linux, via the descriptor) that what was opened is the file
 * at `absolute`: a directory swapped for a symlink between the check and the open fails
 * with code ESWAPPED instead of reading elsewhere.
 */
export async function openCheckedForRead(absolute: string): Promise<FileHandle> {
  const handle = await openForRead(absolute);
  const location = await locationOf(handle);
  if (location !== undefined && location !== absolute) {
    await handle.close();
    throw Object.assign(new Error(`${absolute} changed while being opened`), { code: 'ESWAPPED' });
  }
  return handle;
}

/**
 * openCheckedForRead, synchronously, and the whole file read: the bytes of the regular file at
 * `absolute` (no link at its last component; Linux: the descriptor confirmed to be that file, so a
 * folder on the way swapped for a link fails), or throws (`ESWAPPED`, `ELOOP`, `ENOTFILE`…).
 */
export function readCheckedFileSync(absolute: string): Buffer {
  const fd = openSync(absolute, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    const location = locationOfFdSync(fd);
    if (location !== undefined && location !== absolute) throw Object.assign(new Error(`${absolute} changed while being opened`), { code: 'ESWAPPED' });
    if (!fstatSync(fd).isFile()) throw Object.assign(new Error(`${absolute} is not a regular file`), { code: 'ENOTFILE' });
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Reads the first bytes of the file (positioned read: does not move the handle). */
export async function isBinaryHandle(handle: FileHandle): Promise<boolean> {
  const buf = Buffer.alloc(BINARY_SNIFF_BYTES);
  const { bytesRead } = await handle.read(buf, 0, BINARY_SNIFF_BYTES, 0);
  return looksBinary(buf.subarray(0, bytesRead));
}

export interface LineScanOptions {
  /** Bytes of one line kept for `onLine`; the rest of that line is skipped and `cut` is true. */
  readonly maxLineBytes: number;
  readonly signal?: AbortSignal;
  readonly chunkBytes?: number;
  /** Whether line `lineNo` (1-based) is needed; unwanted lines are counted, never decoded. */
  readonly want?: (lineNo: number) => boolean;
  /** Called once per wanted line (text without its `\n` / `\r\n`); return false to stop reading. */
  readonly onLine: (lineNo: number, text: string, cut: boolean) => boolean;
}

export interface LineScan {
  /** Lines seen (complete, plus a last line without a newline). */
  readonly lines: number;
  /** `onLine` returned false. */
  readonly stopped: boolean;
  readonly aborted: boolean;
}

/**
 * Stream a file line by line in fixed-size chunks: memory is O(chunk + maxLineBytes)
 * whatever the file size or line length.
 */
export async function scanLines(handle: FileHandle, options: LineScanOptions): Promise<LineScan> {
  const chunkBytes = options.chunkBytes ?? 64 * 1024;
  const want = options.want ?? (() => true);
  const buf = Buffer.allocUnsafe(chunkBytes);
  let lineNo = 1;
  let wanted = want(lineNo);
  let parts: Buffer[] = [];
  let kept = 0;
  let cut = false;
  let hasBytes = false;
  let position = 0;

  const emit = (): boolean => {
    let keepGoing = true;
    if (wanted) {
      let text = Buffer.concat(parts, kept).toString('utf8');
      if (!cut && text.endsWith('\r')) text = text.slice(0, -1);
      keepGoing = options.onLine(lineNo, text, cut);
    }
    parts = [];
    kept = 0;
    cut = false;
    hasBytes = false;
    return keepGoing;
  };

  for (;;) {
    if (options.signal?.aborted) return { lines: lineNo - 1, stopped: false, aborted: true };
    const { bytesRead } = await handle.read(buf, 0, chunkBytes, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const data = buf.subarray(0, bytesRead);
    let start = 0;
    while (start < bytesRead) {
      const nl = data.indexOf(10, start);
      const end = nl === -1 ? bytesRead : nl;
      if (end > start) hasBytes = true;
      if (wanted && end > start) {
        const room = options.maxLineBytes - kept;
        const take = Math.min(room, end - start);
        if (take > 0) {
          parts.push(Buffer.from(data.subarray(start, start + take)));
          kept += take;
        }
        if (take < end - start) cut = true;
      }
      if (nl === -1) break;
      if (!emit()) return { lines: lineNo, stopped: true, aborted: false };
      lineNo += 1;
      wanted = want(lineNo);
      start = nl + 1;
    }
  }
  if (hasBytes) {
    const stopped = !emit();
    return { lines: lineNo, stopped, aborted: false };
  }
  return { lines: lineNo - 1, stopped: false, aborted: false };
}
