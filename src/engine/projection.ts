import { closeSync, openSync, readFileSync, statSync, truncateSync, writeSync } from 'node:fs';
import { z } from 'zod';
import { writeJsonAtomicSync } from '../storage/atomic';

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0; // not created yet
  }
}

/** `runs/<run>/projection/<session>.base.json`: which invocation's turn started the file at which size. */
const baseSchema = z.strictObject({ invocationId: z.string().min(1), size: z.number().int().nonnegative() });

function readBase(baseFile: string): z.infer<typeof baseSchema> | null {
  try {
    const parsed = baseSchema.safeParse(JSON.parse(readFileSync(baseFile, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null; // none yet
  }
}

/** The base record's length on disk: a new record overwrites the whole old one in place. */
const RECORD_BYTES = 256;

/**
 * Write the base record: overwritten in place, padded to RECORD_BYTES (one write into an existing
 * file; creating or renaming a file costs 0.3–1 ms each on this kind of disk, every turn); the
 * first record of a session, or one too long to pad, is written whole as a new file. A write cut
 * by the worker's death leaves a record that does not parse, read as none: nothing of the turn
 * was appended yet (the record is written before), so the replay records the file as it finds it.
 */
function writeBase(baseFile: string, record: z.infer<typeof baseSchema>): void {
  const text = JSON.stringify(record);
  if (text.length < RECORD_BYTES) {
    let fd: number | undefined;
    try {
      fd = openSync(baseFile, 'r+');
    } catch {
      fd = undefined; // none yet: written whole below
    }
    if (fd !== undefined) {
      try {
        writeSync(fd, `${text.padEnd(RECORD_BYTES - 1)}\n`, 0);
        return;
      } finally {
        closeSync(fd);
      }
    }
  }
  writeJsonAtomicSync(baseFile, record, { sync: false });
}

/**
 * The session file as it was when the turn started (docs/engine.md#a-turn-on-a-worker): the
 * first attempt of an invocation records the file's size in `baseFile` (written before anything
 * of the turn is appended, `writeBase`); a later attempt of the same invocation
 * finds its record there and cuts the file back to it, so what a dead attempt appended is dropped
 * and the replay appends it again from the journaled steps. The record sits in the shared
 * workspace beside the projection it describes (not in the engine's journal: one round trip less
 * per turn) and is as durable as that file: not fsynced (the session file's appends are not
 * either; a synced record cost 2–6 ms of every turn here), so it survives a worker killed, not
 * the machine losing its page cache. Only this session's files are touched; the engine runs one
 * turn of a session at a time.
 */
export function resetProjection(file: string, baseFile: string, invocationId: string): void {
  const recorded = readBase(baseFile);
  if (recorded?.invocationId !== invocationId) {
    writeBase(baseFile, { invocationId, size: sizeOf(file) });
    return;
  }
  if (sizeOf(file) > recorded.size) truncateSync(file, recorded.size);
}
