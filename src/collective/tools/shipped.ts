import { secretPathMatcher } from '../../tools/sandbox/secrets';
import { DEFAULT_SECRET_PATTERNS } from '../../tools/sandbox/secret-patterns';
import { createBuiltinTools } from '../../tools/registry';
import type { TodoStore } from '../../tools/todo-store';
import { keyArgumentText, type KeyArgumentOf } from '../../tools/key-argument';
import type { Tool } from '../../tools/types';
import { createCollectiveTools, type CollectiveToolDeps } from './index';

const NEVER_RUNS = (): never => {
  throw new Error('a shipped tool definition does not run');
};

/** The todo tools' definitions need a store; these instances never run, so it is never used. */
const DEFINITIONS_ONLY: TodoStore = { read: NEVER_RUNS, write: NEVER_RUNS };

/** The collective tools' definitions need their dependencies; never used either. */
const COLLECTIVE_DEFINITIONS_ONLY: CollectiveToolDeps = {
  registry: { get: NEVER_RUNS, list: NEVER_RUNS, spawn: NEVER_RUNS, modify: NEVER_RUNS, retire: NEVER_RUNS },
  tools: { get: NEVER_RUNS, list: NEVER_RUNS },
  communicate: NEVER_RUNS,
  resolveApproval: NEVER_RUNS,
  sessionHistory: NEVER_RUNS,
};

/** The names of the collective tools the runtime core adds to a run's catalog (reserved: no MCP tool takes one). */
export const COLLECTIVE_TOOL_NAMES: readonly string[] = createCollectiveTools(COLLECTIVE_DEFINITIONS_ONLY).map((tool) => tool.name);

/**
 * Every tool Legion ships (docs/tools.md), as definitions: what is known of a tool without a
 * run's catalog — the tool names and input fields rule files are checked against
 * (authz/rules/known-tools.ts) and the key argument front ends show (`keyArgumentOf`). The run's
 * catalog holds working instances of the same definitions (compose.ts).
 */
export const SHIPPED_TOOLS: readonly Tool[] = [...createBuiltinTools({ secretPath: secretPathMatcher(DEFAULT_SECRET_PATTERNS),  todoStore: DEFINITIONS_ONLY, sandbox: 'none' }), ...createCollectiveTools(COLLECTIVE_DEFINITIONS_ONLY)];

const byName = new Map(SHIPPED_TOOLS.map((tool) => [tool.name, tool]));

export function shippedTool(name: string): Tool | undefined {
  return byName.get(name);
}

/** The key argument of a call as front ends show it (tools/key-argument.ts), from the shipped tool of that name. */
export const keyArgumentOf: KeyArgumentOf = (toolName, input) => keyArgumentText(shippedTool(toolName), input);
