import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomicSync } from '../storage/atomic';
import { lazySchema } from '../storage/lazy-schema';

/** `.legion/engine/engine.json`: what `legion engine up` started (docs/engine.md#running-it). */
export const localEngineRecordSchema = lazySchema(() =>
  z.strictObject({
    serverPid: z.number().int().positive(),
    workerPid: z.number().int().positive(),
    ingress: z.string().url(),
    admin: z.string().url(),
    worker: z.string().url(),
    /** The engine's request identity public key (its worker accepts requests signed by it only); absent in a record from before. */
    identityKey: z.string().optional(),
    startedAt: z.string(),
  }),
);
export type LocalEngineRecord = z.infer<ReturnType<typeof localEngineRecordSchema>>;

export const engineDir = (legionDir: string): string => join(legionDir, 'engine');
const recordFile = (legionDir: string): string => join(engineDir(legionDir), 'engine.json');

/** The record, or null when there is none (or it does not parse: treated as none). */
export function readLocalEngine(legionDir: string): LocalEngineRecord | null {
  try {
    const parsed = localEngineRecordSchema().safeParse(JSON.parse(readFileSync(recordFile(legionDir), 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function writeLocalEngine(legionDir: string, record: LocalEngineRecord): void {
  writeJsonAtomicSync(recordFile(legionDir), record);
}

export function removeLocalEngine(legionDir: string): void {
  rmSync(recordFile(legionDir), { force: true });
}
