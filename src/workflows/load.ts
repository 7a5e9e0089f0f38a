import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { z } from 'zod';
import { parseYamlSource } from '../config/yaml-source';
import { didYouMean } from '../authz/rules/did-you-mean';
import { WORKFLOW_NAME, workflowFileSchema, type Workflow } from './schema';
import { validateWorkflow } from './validate';

/** Where workflows are read from, lowest first: a later directory's `<name>.yaml` overrides an earlier one's. */
export interface WorkflowDirs {
  /** `config/workflows/` of the app. */
  readonly shipped: string;
  /** `.legion/workflows/` of the workspace. */
  readonly project: string;
}

export function workflowDirs(appDir: string, workspaceRoot: string): WorkflowDirs {
  return { shipped: join(appDir, 'config', 'workflows'), project: join(workspaceRoot, '.legion', 'workflows') };
}

/** One file's result: a workflow, or the one-line error that names file and line. */
export type WorkflowEntry = { ok: true; workflow: Workflow } | { ok: false; name: string; file: string; source: Workflow['source']; error: string };

const FIELDS: Record<string, readonly string[]> = {
  file: ['version', 'description', 'inputs', 'budgetUsd', 'steps'],
  step: ['id', 'agent', 'prompt', 'after', 'session'],
  input: ['description', 'default'],
};

/** The first zod issue as `path` + message a workflow author understands. */
function describe(error: z.ZodError): { path: (string | number)[]; message: string } {
  const issue = error.issues.find((i) => i.code === 'unrecognized_keys') ?? error.issues[0]!;
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  const where = path.length === 0 ? 'file' : path[0] === 'steps' ? 'step' : path[0] === 'inputs' ? 'input' : 'file';
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    return { path: [...path, key], message: `unknown field "${key}"${didYouMean(key, FIELDS[where]!)}` };
  }
  const label = path.join('.') || '(root)';
  return { path, message: `${label}: ${issue.message.replace(/^Invalid input: /, '')}` };
}

/** Parse and validate one workflow text. `agents`: the collective's active agents (absent: not checked). */
export function parseWorkflow(text: string, file: string, options: { source: Workflow['source']; agents?: readonly string[] }): WorkflowEntry {
  const name = basename(file).replace(/\.ya?ml$/, '');
  const fail = (error: string): WorkflowEntry => ({ ok: false, name, file, source: options.source, error });
  if (!WORKFLOW_NAME.test(name)) return fail(`${file}:1: the file name "${name}" is not a workflow name (1–30 characters of a-z, 0-9, "_" or "-")`);
  const parsed = parseYamlSource(text, file);
  if (!parsed.ok) return fail(parsed.error);
  const { data, lineOf } = parsed.source;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return fail(`${file}:1: a workflow file is a mapping with description, inputs, budgetUsd and steps`);
  const shape = workflowFileSchema.safeParse(data);
  if (!shape.success) {
    const problem = describe(shape.error);
    return fail(`${file}:${lineOf(problem.path) ?? 1}: ${problem.message}`);
  }
  const checked = validateWorkflow(shape.data, { name, file, source: options.source, lineOf, ...(options.agents ? { agents: options.agents } : {}) });
  return checked.ok ? checked : fail(checked.error);
}

async function yamlFiles(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f) && !f.startsWith('.')).sort().map((f) => join(dir, f));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw error;
  }
}

/**
 * Every workflow of the shipped and project directories, sorted by name; a project file hides
 * the shipped one of the same name. Broken files are entries with their error (listed, not
 * runnable), so one bad file never hides the others.
 */
export async function loadWorkflows(dirs: WorkflowDirs, options: { agents?: readonly string[] } = {}): Promise<WorkflowEntry[]> {
  const byName = new Map<string, WorkflowEntry>();
  for (const [source, dir] of [['shipped', dirs.shipped], ['project', dirs.project]] as const) {
    for (const file of await yamlFiles(dir)) {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        byName.set(basename(file).replace(/\.ya?ml$/, ''), { ok: false, name: basename(file).replace(/\.ya?ml$/, ''), file, source, error: `${file}: cannot read: ${(error as Error).message}` });
        continue;
      }
      const entry = parseWorkflow(text, file, { source, ...options });
      byName.set(entry.ok ? entry.workflow.name : entry.name, entry);
    }
  }
  return [...byName.values()].sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
}

export const nameOf = (entry: WorkflowEntry): string => (entry.ok ? entry.workflow.name : entry.name);

/** The workflow called `name`, or why it cannot run. */
export function findWorkflow(entries: readonly WorkflowEntry[], name: string): { ok: true; workflow: Workflow } | { ok: false; error: string } {
  const entry = entries.find((e) => nameOf(e) === name);
  if (!entry) {
    const names = entries.map(nameOf);
    return { ok: false, error: `no workflow "${name}"${didYouMean(name, names)} (${names.length > 0 ? `known: ${names.join(', ')}` : 'none found'}; see legion workflows)` };
  }
  return entry.ok ? entry : { ok: false, error: entry.error };
}

/** The inputs a run gets: given values, then defaults; unknown or missing required ones are errors. */
export function resolveInputs(workflow: Workflow, given: Readonly<Record<string, string>>): { ok: true; inputs: Record<string, string> } | { ok: false; error: string } {
  const declared = Object.keys(workflow.inputs);
  for (const key of Object.keys(given)) {
    if (!declared.includes(key)) return { ok: false, error: `workflow ${workflow.name} has no input "${key}"${didYouMean(key, declared)}${declared.length ? ` (inputs: ${declared.join(', ')})` : ' (it takes none)'}` };
  }
  const inputs: Record<string, string> = {};
  for (const [name, spec] of Object.entries(workflow.inputs)) {
    const value = given[name] ?? spec.default;
    if (value === undefined) return { ok: false, error: `workflow ${workflow.name} needs --input ${name}=…${spec.description ? ` (${spec.description})` : ''}` };
    inputs[name] = value;
  }
  return { ok: true, inputs };
}
