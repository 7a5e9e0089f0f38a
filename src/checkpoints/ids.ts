import { randomBytes } from 'node:crypto';

/** A checkpoint id: sortable by time, short enough to type (`ck-<base36 ms>-<4 hex>`). */
export function newCheckpointId(now: Date): string {
  return `ck-${now.getTime().toString(36)}-${randomBytes(2).toString('hex')}`;
}

export const CHECKPOINT_ID = /^ck-[0-9a-z]{1,12}-[0-9a-f]{4}$/;
