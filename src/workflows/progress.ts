import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic } from '../storage/atomic';
import { messageOf } from '../errors';

/**
 * The progress of one workflow run, `runs/<runId>/workflows/<workflowId>.json`, rewritten
 * atomically on every change: what a restart reads to skip finished steps and resume the rest.
 */
const stepProgressSchema = z.object({
  status: z.enum(['pending', 'running', 'done', 'failed', 'cancelled', 'skipped']),
  sessionId: z.string(),
  /** The session's message count when the step's prompt was sent (its answer comes after). */
  startIndex: z.number().int().min(0).optional(),
  output: z.string().optional(),
  error: z.string().optional(),
  costUsd: z.number().default(0),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
});

export const workflowProgressSchema = z.object({
  version: z.literal(1),
  workflowId: z.string(),
  name: z.string(),
  file: z.string(),
  status: z.enum(['running', 'done', 'failed', 'cancelled', 'budget']),
  input: z.string(),
  inputs: z.record(z.string(), z.string()),
  budgetUsd: z.number().optional(),
  /** How often the budget was raised (approved budget requests). */
  budgetRaises: z.number().int().min(0).default(0),
  spentUsd: z.number().default(0),
  startedAt: z.string(),
  endedAt: z.string().optional(),
  error: z.string().optional(),
  /** By step id, in the file's order. */
  steps: z.record(z.string(), stepProgressSchema),
  /** The steps as they were when the workflow started: a resume does not depend on the file. */
  plan: z.array(z.object({
    id: z.string(), agent: z.string(), prompt: z.string(), after: z.array(z.string()), session: z.string(), isolation: z.enum(['worktree', 'none']).optional(),
  })).min(1),
});

export type WorkflowProgress = z.infer<typeof workflowProgressSchema>;
export type StepProgress = z.infer<typeof stepProgressSchema>;
export type StepStatus = StepProgress['status'];

/** Where the progress files of one run live, and how they are read and written. */
export interface ProgressStore {
  save(progress: WorkflowProgress): Promise<void>;
  /** Every readable progress file of the run; unreadable ones are reported, not thrown. */
  list(): Promise<{ progress: WorkflowProgress[]; issues: string[] }>;
}

export function createProgressStore(dir: string): ProgressStore {
  return {
    save: (progress) => writeJsonAtomic(join(dir, `${progress.workflowId}.json`), progress),
    async list() {
      let names: string[];
      try {
        names = (await readdir(dir)).filter((f) => f.endsWith('.json') && !f.startsWith('.')).sort();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { progress: [], issues: [] };
        return { progress: [], issues: [`${dir}: cannot read: ${messageOf(error)}`] };
      }
      const progress: WorkflowProgress[] = [];
      const issues: string[] = [];
      for (const name of names) {
        const file = join(dir, name);
        try {
          const parsed = workflowProgressSchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
          if (parsed.success) progress.push(parsed.data);
          else issues.push(`${file}: not a workflow progress file (${parsed.error.issues[0]?.path.join('.') || '(root)'}: ${parsed.error.issues[0]?.message}); that workflow is not resumed`);
        } catch (error) {
          issues.push(`${file}: ${messageOf(error)}; that workflow is not resumed`);
        }
      }
      return { progress, issues };
    },
  };
}
