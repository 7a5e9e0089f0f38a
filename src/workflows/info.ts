import type { WorkflowEntry } from './load';

/** A workflow entry as front ends list it (`WorkflowInfo` of src/runtime/core-api.ts). */
export function workflowInfo(entry: WorkflowEntry) {
  if (!entry.ok) return { name: entry.name, description: '', steps: [], inputs: [], usesInput: false, file: entry.file, source: entry.source, error: entry.error };
  const w = entry.workflow;
  return {
    name: w.name, description: w.description, steps: w.steps.map((s) => s.id), inputs: Object.keys(w.inputs),
    usesInput: w.steps.some((s) => /\{\{\s*input\s*\}\}/.test(s.prompt)), file: w.file, source: w.source,
    ...(w.budgetUsd !== undefined ? { budgetUsd: w.budgetUsd } : {}),
  };
}
