import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { LegionError } from '../errors';
import type { RunRecord } from './types';
import { ONE_SHOT } from '../storage/zod-validate';
import { lazySchema } from '../storage/lazy-schema';

const runFileSchema = lazySchema(() =>
  z.object({
    version: z.literal(1),
    id: z.string().min(1),
    createdAt: z.string().min(1),
    updatedAt: z.string().min(1),
    title: z.string().optional(),
  }),
);

/** What `run.json` holds: exactly the RunRecord fields (extra fields a caller carries are not written). */
export function runFileContent(run: RunRecord): RunRecord {
  const out: RunRecord = { version: 1, id: run.id, createdAt: run.createdAt, updatedAt: run.updatedAt };
  if (run.title !== undefined) out.title = run.title;
  return out;
}

/**
 * Read and validate `runs/<runId>/run.json`. Missing → `null`. Damaged (cut, not JSON,
 * wrong shape, id not matching its folder, newer format) → a LegionError naming the file.
 * Never writes.
 */
export async function readRunFile(file: string, runId: string): Promise<RunRecord | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new LegionError(`${file}: cannot read: ${(error as Error).message}`);
  }
  const hint = 'the run file is damaged: restore it, or start a new run with --new';
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new LegionError(`${file}: not valid JSON (${(error as Error).message}); ${hint}`);
  }
  const version = (raw as { version?: unknown } | null)?.version;
  if (typeof version === 'number' && version > 1) {
    throw new LegionError(`${file}: made by a newer Legion (run format ${version}; this build reads 1): upgrade Legion`);
  }
  const result = runFileSchema().safeParse(raw, ONE_SHOT);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new LegionError(`${file}: ${issue.path.join('.') || '(root)'}: ${issue.message}; ${hint}`);
  }
  if (result.data.id !== runId) throw new LegionError(`${file}: id "${result.data.id}" does not match its folder "${runId}"; ${hint}`);
  return runFileContent(result.data as RunRecord);
}
