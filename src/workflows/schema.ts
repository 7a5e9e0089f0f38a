import { z } from 'zod';

/**
 * The shape of a workflow file, `.legion/workflows/<name>.yaml` or `config/workflows/<name>.yaml`
 * (docs/workflows.md). Only the shape: references between steps, agents and template variables
 * are checked by validate.ts, which knows the whole file.
 */
export const STEP_ID = /^[a-z0-9][a-z0-9_-]{0,29}$/i;
export const WORKFLOW_NAME = /^[a-z0-9][a-z0-9_-]{0,29}$/i;

const inputSchema = z.strictObject({
  description: z.string().optional(),
  /** Used when `--input <name>=…` is not given; without one the input is required. */
  default: z.string().optional(),
});

export const stepSchema = z.strictObject({
  id: z.string().regex(STEP_ID, 'a step id is 1–30 characters of a-z, 0-9, "_" or "-", starting with a letter or digit'),
  agent: z.string().min(1),
  prompt: z.string().min(1),
  after: z.array(z.string()).optional(),
  /** Session name; default `<workflow>-<step>`. */
  session: z.string().optional(),
  /** Work in a git worktree (docs/worktrees.md); default: `worktree` for a step that writes and may run beside another. */
  isolation: z.enum(['worktree', 'none']).optional(),
});

export const workflowFileSchema = z.strictObject({
  version: z.literal(1).optional(),
  description: z.string().default(''),
  inputs: z.record(z.string(), inputSchema.nullable()).optional(),
  /** Cap on the summed cost of the steps' sessions; absent = no cap. */
  budgetUsd: z.number().positive().optional(),
  steps: z.array(stepSchema).min(1, 'a workflow needs at least one step'),
});

export type WorkflowFile = z.infer<typeof workflowFileSchema>;
export type WorkflowStep = z.infer<typeof stepSchema>;

/** A loaded, validated workflow. */
export interface Workflow {
  readonly name: string;
  readonly description: string;
  /** Where it was read from (a project file overrides a shipped one of the same name). */
  readonly file: string;
  readonly source: 'project' | 'shipped';
  readonly inputs: Readonly<Record<string, { readonly description?: string; readonly default?: string }>>;
  readonly budgetUsd?: number;
  readonly steps: readonly ResolvedStep[];
}

export interface ResolvedStep {
  readonly id: string;
  readonly agent: string;
  readonly prompt: string;
  readonly after: readonly string[];
  /** The session name the step talks in: `user → <agent> · <session>`. */
  readonly session: string;
  /** As the file says it (absent: the runner decides, see graph.ts `isolationOf`). */
  readonly isolation?: 'worktree' | 'none';
}
