import * as nodeFs from 'node:fs';
import type { Message } from '../model/message';
import { isRecord, validateSessionLine, type SessionLine } from '../session/session-files';
import { createJsonlByteParser } from '../storage/jsonl-bytes';

/** The file calls the follower makes (injectable so tests can count the bytes read). */
export type FollowerFs = Pick<typeof nodeFs, 'openSync' | 'fstatSync' | 'readSync' | 'closeSync'>;

/** How far the hub has read one session file, and what identifies the bytes it read. */
interface Followed {
  readonly dev: number;
  readonly ino: number;
  /** Bytes read: up to and including the last newline seen. */
  readonly offset: number;
  /** Messages (not context lines) in the first `offset` bytes. */
  readonly count: number;
  /** The last `min(offset, TAIL_BYTES)` bytes before `offset`, as read. */
  readonly tail: Buffer;
}

/**
 * Bytes before the offset compared on every catch-up. Every message line ends with its `at`
 * timestamp (ms) and a newline, so a file rewritten in place (a replay's reset and its appends)
 * that regrew past the offset differs there unless its bytes are the very ones read.
 */
const TAIL_BYTES = 4096;
const READ_CHUNK = 64 * 1024;

export interface ProjectionFollower {
  /**
   * The session's messages from index `held` on, as a full read of its file would give them
   * (`readSessionFile(...).messages.slice(held)`, except that a last line without its newline
   * is left for the next call); `null` when the file does not exist.
   */
  since(sessionId: string, held: number): Message[] | null;
}

/**
 * The hub's reader of the projection (docs/engine.md#streaming-and-the-hub): per session it keeps
 * the offset it has read up to, so a turn's catch-up reads only what was appended since. It falls
 * back to a full read whenever that offset may not describe the file any more: another file at
 * the path (inode/device), a file shorter than the offset (a replay's reset, a torn tail cut),
 * bytes before the offset that are not the ones read (rewritten in place and regrown), or a
 * caller holding fewer messages than were read (it needs earlier ones). Only complete lines are
 * consumed: bytes after the last newline (an append in progress) are read again next time.
 */
export function createProjectionFollower(fileOf: (sessionId: string) => string, fs: FollowerFs = nodeFs): ProjectionFollower {
  const followed = new Map<string, Followed>();

  /** The kept state, if it still describes the file open at `fd`. */
  function stillValid(known: Followed | undefined, fd: number, stat: nodeFs.Stats, held: number): known is Followed {
    if (!known || known.dev !== stat.dev || known.ino !== stat.ino || stat.size < known.offset || held < known.count) return false;
    if (known.tail.length === 0) return true;
    const now = Buffer.allocUnsafe(known.tail.length);
    let got = 0;
    while (got < now.length) {
      const n = fs.readSync(fd, now, got, now.length - got, known.offset - known.tail.length + got);
      if (n === 0) return false;
      got += n;
    }
    return now.equals(known.tail);
  }

  return {
    since(sessionId, held) {
      let fd: number;
      try {
        fd = fs.openSync(fileOf(sessionId), 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        followed.delete(sessionId);
        return null;
      }
      try {
        const stat = fs.fstatSync(fd);
        const known = followed.get(sessionId);
        const from = stillValid(known, fd, stat, held) ? known : { dev: stat.dev, ino: stat.ino, offset: 0, count: 0, tail: Buffer.alloc(0) };
        const parser = createJsonlByteParser<SessionLine>(fileOf(sessionId), validateSessionLine);
        // Only complete lines go to the parser: bytes after the last newline wait in `pending`.
        let pending: Buffer[] = [];
        let consumed = 0;
        let tail = from.tail;
        const take = (bytes: Buffer): void => {
          parser.push(bytes);
          consumed += bytes.length;
          tail = bytes.length >= TAIL_BYTES ? Buffer.from(bytes.subarray(bytes.length - TAIL_BYTES)) : Buffer.concat([tail, bytes]).subarray(-TAIL_BYTES);
        };
        const chunk = Buffer.allocUnsafe(READ_CHUNK);
        let position = from.offset;
        for (;;) {
          const n = fs.readSync(fd, chunk, 0, chunk.length, position);
          if (n === 0) break;
          position += n;
          const bytes = chunk.subarray(0, n);
          const nl = bytes.lastIndexOf(0x0a);
          if (nl < 0) {
            pending.push(Buffer.from(bytes));
            continue;
          }
          for (const piece of pending) take(piece);
          take(bytes.subarray(0, nl + 1)); // the parser and `tail` copy what they keep
          pending = nl + 1 < n ? [Buffer.from(bytes.subarray(nl + 1))] : [];
        }
        const lines = parser.end().records;
        const messages = lines.some(isRecord) ? lines.filter((line): line is Message => !isRecord(line)) : (lines as Message[]);
        followed.set(sessionId, { dev: from.dev, ino: from.ino, offset: from.offset + consumed, count: from.count + messages.length, tail: Buffer.from(tail) });
        return messages.slice(Math.max(0, held - from.count));
      } finally {
        fs.closeSync(fd);
      }
    },
  };
}
