import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { LegionError } from '../errors';
import type { RunRecord } from './types';
import { ONE_SHOT } from '../storage/zod-validate';
import { lazySchema } from '../storage/lazy-schema';

/** Exported for test/unit/session/run-file-plain.test.ts (with plainRunFile). */
export const runFileSchema = lazySchema(() =>
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
  const run = plainRunFile(raw) ?? schemaRunFile(raw, file, hint);
  if (run.id !== runId) throw new LegionError(`${file}: id "${run.id}" does not match its folder "${runId}"; ${hint}`);
  return run;
}

/** The schema's verdict, for what the plain check does not accept: the record, or the fault named. */
function schemaRunFile(raw: unknown, file: string, hint: string): RunRecord {
  const result = runFileSchema().safeParse(raw, ONE_SHOT);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new LegionError(`${file}: ${issue.path.join('.') || '(root)'}: ${issue.message}; ${hint}`);
  }
  return runFileContent(result.data as RunRecord);
}

const filled = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/**
 * The run file as the schema returns it (through `runFileContent`), when a plain check shows the
 * schema accepts it; else undefined, and the schema decides and names what is wrong. Every start
 * that resumes a run reads its run file (and `latest()` every run's): the schema, built at its
 * first use, cost more than the read (docs/performance.md#start-up). Accepts nothing the schema
 * refuses and everything it accepts from JSON (test/unit/session/run-file-plain.test.ts).
 */
export function plainRunFile(raw: unknown): RunRecord | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const r = raw as Record<string, unknown>;
  if (r.version !== 1 || !filled(r.id) || !filled(r.createdAt) || !filled(r.updatedAt)) return undefined;
  if (r.title !== undefined && typeof r.title !== 'string') return undefined;
  return runFileContent({ version: 1, id: r.id, createdAt: r.createdAt, updatedAt: r.updatedAt, ...(typeof r.title === 'string' ? { title: r.title } : {}) });
}
