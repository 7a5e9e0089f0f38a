import type { Participant } from '../../src/collective/participant';
import type { WorkflowInfo } from '../../src/runtime/core-api';
import { matchScore } from './switcher-filter';

/** A row of the new-session modal: an agent to open a session with, or a workflow to start (docs/workflows.md#tui). */
export type Choice = { readonly kind: 'agent'; readonly id: string; readonly participant: Participant } | { readonly kind: 'workflow'; readonly id: string; readonly workflow: WorkflowInfo };

/** Runnable workflows matching the typed text: exact name, then prefix, then substring of name or description. */
export function workflowChoices(workflows: readonly WorkflowInfo[], typed: string): Choice[] {
  const q = typed.trim().toLowerCase();
  const runnable = workflows.filter((w) => !w.error);
  const rank = (w: WorkflowInfo): number => (q === '' ? 1 : w.name === q ? 4 : w.name.startsWith(q) ? 3 : (matchScore(`${w.name} ${w.description}`, q) ?? 0));
  return runnable.map((w) => ({ w, r: rank(w) })).filter((x) => x.r >= 1 && (q === '' || x.r >= 2)).sort((a, b) => b.r - a.r || (a.w.name < b.w.name ? -1 : 1))
    .map((x) => ({ kind: 'workflow' as const, id: x.w.name, workflow: x.w }));
}

/**
 * The modal's input line for a workflow: `<input> | <name>=<value> | …`. The first part is the
 * workflow's `{{input}}`; each later part a named input. A part without `=` is an error.
 */
export function parseWorkflowLine(line: string): { ok: true; input: string; inputs: Record<string, string> } | { ok: false; error: string } {
  const [input = '', ...rest] = line.split(' | ');
  const inputs: Record<string, string> = {};
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq <= 0) return { ok: false, error: `"${part.trim()}": a named input is name=value` };
    inputs[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return { ok: true, input: input.trim(), inputs };
}
