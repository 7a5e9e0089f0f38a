import { open } from 'node:fs/promises';
import { surelyAbsent } from '../storage/absent';

/**
 * The `seq` of the last complete event in a ledger (0 when the file is missing or holds
 * none), read from the end of the file so resuming a long run costs the same as a short
 * one. A torn last line is skipped.
 */
export async function lastLedgerSeq(path: string): Promise<number> {
  // A new run has no ledger yet: no failing promised read before the first frame (absent.ts).
  if (surelyAbsent(path)) return 0;
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  try {
    const size = (await handle.stat()).size;
    let chunk = 64 * 1024;
    for (;;) {
      const start = Math.max(0, size - chunk);
      const buffer = Buffer.alloc(size - start);
      await handle.read(buffer, 0, buffer.length, start);
      const lines = buffer.toString('utf8').split('\n');
      // The first piece may be a partial line unless we read from the file's start.
      const from = start === 0 ? 0 : 1;
      for (let i = lines.length - 1; i >= from; i--) {
        const line = lines[i]!.trim();
        if (!line) continue;
        try {
          const seq = (JSON.parse(line) as { seq?: unknown }).seq;
          if (typeof seq === 'number' && Number.isInteger(seq) && seq > 0) return seq;
        } catch {
          // torn or broken line: look further back
        }
      }
      if (start === 0) return 0;
      chunk *= 4;
    }
  } finally {
    await handle.close();
  }
}
