import { didYouMean } from '../authz/rules/did-you-mean';
import { checkSessionName } from '../session/ids';
import type { ResolvedStep, Workflow, WorkflowFile } from './schema';
import { templateRefs } from './template';

export type YamlPath = readonly (string | number)[];

/** What validation needs besides the file's data. */
export interface ValidateContext {
  readonly name: string;
  readonly file: string;
  readonly source: Workflow['source'];
  lineOf(path: YamlPath): number | null;
  /** Active agents of the collective; absent: agents are not checked. */
  readonly agents?: readonly string[];
}

export type WorkflowCheck = { ok: true; workflow: Workflow } | { ok: false; error: string };

/**
 * The checks a schema cannot make, first problem wins, as `file:line: step <id>: what is wrong`:
 * duplicate step ids, unknown steps in `after`, cycles (named), unknown agents, unknown template
 * variables, and `{{steps.<id>.output}}` of a step that does not finish before this one.
 */
export function validateWorkflow(data: WorkflowFile, context: ValidateContext): WorkflowCheck {
  const at = (path: YamlPath): string => `${context.file}:${context.lineOf(path) ?? 1}`;
  const fail = (path: YamlPath, message: string): WorkflowCheck => ({ ok: false, error: `${at(path)}: ${message}` });
  const ids = data.steps.map((s) => s.id);
  const firstIndex = new Map<string, number>();
  for (const [i, step] of data.steps.entries()) {
    const before = firstIndex.get(step.id);
    if (before !== undefined) return fail(['steps', i, 'id'], `step ${step.id}: duplicate id (also at line ${context.lineOf(['steps', before]) ?? 1})`);
    firstIndex.set(step.id, i);
  }
  const inputNames = Object.keys(data.inputs ?? {});
  const steps: ResolvedStep[] = [];
  const sessions = new Map<string, string>();
  for (const [i, step] of data.steps.entries()) {
    const label = `step ${step.id}`;
    const after = step.after ?? [];
    for (const [j, dep] of after.entries()) {
      if (dep === step.id) return fail(['steps', i, 'after', j], `${label}: cannot run after itself`);
      if (!firstIndex.has(dep)) return fail(['steps', i, 'after', j], `${label}: unknown step "${dep}" in after${didYouMean(dep, ids)}`);
    }
    if (context.agents && !context.agents.includes(step.agent)) {
      return fail(['steps', i, 'agent'], `${label}: unknown agent "${step.agent}"${didYouMean(step.agent, context.agents)} (create it first, e.g. ask resource-agent; see legion workflows)`);
    }
    const session = step.session ?? `${context.name}-${step.id}`;
    const sessionProblem = checkSessionName(session);
    if (sessionProblem) return fail(['steps', i, step.session === undefined ? 'id' : 'session'], `${label}: ${sessionProblem}`);
    const sharedWith = sessions.get(`${step.agent} ${session}`);
    if (sharedWith) return fail(['steps', i, step.session === undefined ? 'id' : 'session'], `${label}: shares session "${session}" of ${step.agent} with step ${sharedWith}: give one a session of its own`);
    sessions.set(`${step.agent} ${session}`, step.id);
    steps.push({ id: step.id, agent: step.agent, prompt: step.prompt, after: [...new Set(after)], session, ...(step.isolation ? { isolation: step.isolation } : {}) });
  }
  const cycle = findCycle(steps);
  if (cycle) return fail(['steps', firstIndex.get(cycle[0]!)!, 'after'], `steps form a cycle: ${[...cycle, cycle[0]].join(' → ')}`);
  const ancestors = ancestorsOf(steps);
  for (const [i, step] of steps.entries()) {
    for (const ref of templateRefs(step.prompt)) {
      const where: YamlPath = ['steps', i, 'prompt'];
      const variable = ref.variable;
      if (!variable) return fail(where, `step ${step.id}: unknown template variable ${ref.text} (use {{input}}, {{inputs.<name>}} or {{steps.<id>.output}})`);
      if (variable.kind === 'inputs' && !inputNames.includes(variable.name)) {
        return fail(where, `step ${step.id}: unknown template variable ${ref.text}: no input "${variable.name}" under inputs${didYouMean(variable.name, inputNames)}`);
      }
      if (variable.kind === 'step') {
        if (!firstIndex.has(variable.id)) return fail(where, `step ${step.id}: unknown template variable ${ref.text}: no step "${variable.id}"${didYouMean(variable.id, ids)}`);
        if (!ancestors.get(step.id)!.has(variable.id)) {
          return fail(where, `step ${step.id}: ${ref.text} is not ready when ${step.id} starts: add "${variable.id}" to its after`);
        }
      }
    }
  }
  const inputs: Record<string, { description?: string; default?: string }> = {};
  for (const [name, spec] of Object.entries(data.inputs ?? {})) inputs[name] = { ...(spec ?? {}) };
  return {
    ok: true,
    workflow: {
      name: context.name, description: data.description, file: context.file, source: context.source, inputs, steps,
      ...(data.budgetUsd !== undefined ? { budgetUsd: data.budgetUsd } : {}),
    },
  };
}

/** A cycle of `after` edges as the step ids along it, or null. */
function findCycle(steps: readonly ResolvedStep[]): string[] | null {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | null => {
    if (state.get(id) === 'done') return null;
    if (state.get(id) === 'open') return path.slice(path.indexOf(id));
    state.set(id, 'open');
    path.push(id);
    for (const dep of byId.get(id)!.after) {
      const found = visit(dep);
      if (found) return found;
    }
    path.pop();
    state.set(id, 'done');
    return null;
  };
  for (const step of steps) {
    const found = visit(step.id);
    // Walked along `after` (dependant → dependency): reversed, it reads in running order.
    if (found) return found.reverse();
  }
  return null;
}

/** Every step's transitive `after` set (the graph is acyclic). */
export function ancestorsOf(steps: readonly { readonly id: string; readonly after: readonly string[] }[]): Map<string, Set<string>> {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const memo = new Map<string, Set<string>>();
  const get = (id: string): Set<string> => {
    let set = memo.get(id);
    if (set) return set;
    set = new Set();
    memo.set(id, set);
    for (const dep of byId.get(id)!.after) {
      set.add(dep);
      for (const up of get(dep)) set.add(up);
    }
    return set;
  };
  for (const step of steps) get(step.id);
  return memo;
}
