import { z } from 'zod';
import micromatch from 'micromatch';
import type { Tool, ToolCatalog } from './types';
import type { ToolDefinition } from '../providers/types';
import type { TodoStore } from './todo-store';
import { fileReadTool } from './builtin/file-read';
import { fileWriteTool } from './builtin/file-write';
import { fileEditTool } from './builtin/file-edit';
import { fileListTool } from './builtin/file-list';
import { fileDeleteTool } from './builtin/file-delete';
import { globTool } from './builtin/glob';
import { createGrepTool } from './builtin/grep';
import { createShellTool } from './builtin/shell';
import type { ShellSandbox } from './sandbox/sandbox';
import { createTodoTools } from './builtin/todo';
import { createSkillTool, NO_SKILLS, type SkillCatalog } from './builtin/skill';

export interface ToolRegistry {
  get(name: string): Tool | undefined;
  /** Every tool, in registration order. */
  list(): readonly Tool[];
  /**
   * Provider definitions of the tools named: exact names or globs (`todo_*`, `*`), as in a
   * participant's `tools`. Registration order, no duplicates; names matching no tool are skipped.
   * Without `names`, every tool.
   */
  definitions(names?: readonly string[]): ToolDefinition[];
}

/** A tool as a provider sees it: its zod input schema as a JSON Schema object (zod 4 `toJSONSchema`, input side). */
export function toolDefinition(tool: Tool): ToolDefinition {
  if (tool.inputJsonSchema) return { name: tool.name, description: tool.description, inputSchema: tool.inputJsonSchema };
  const { $schema: _ignored, ...inputSchema } = z.toJSONSchema(tool.schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return { name: tool.name, description: tool.description, inputSchema };
}

/** The input fields of `tool`: the properties of its input schema as providers see it. */
export function inputFieldsOf(tool: Tool): readonly string[] {
  // A zod object's properties are its shape's keys: no JSON Schema built for them (the rule
  // files are checked against the shipped tools' fields at every start; ~2 ms).
  if (!tool.inputJsonSchema && tool.schema instanceof z.ZodObject) return Object.keys(tool.schema.shape);
  const properties = toolDefinition(tool).inputSchema.properties;
  return properties !== null && typeof properties === 'object' ? Object.keys(properties) : [];
}

/** Throws on a duplicate name (a programming error, found at start). */
export function createToolRegistry(tools: readonly Tool[]): ToolRegistry {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`duplicate tool name: ${tool.name}`);
    byName.set(tool.name, tool);
  }
  const definitions = new Map<string, ToolDefinition>();
  const definitionOf = (tool: Tool): ToolDefinition => {
    let def = definitions.get(tool.name);
    if (!def) {
      def = toolDefinition(tool);
      definitions.set(tool.name, def);
    }
    return def;
  };
  const all = [...byName.values()];
  return {
    get: (name) => byName.get(name),
    list: () => all,
    definitions(names) {
      if (names === undefined) return all.map(definitionOf);
      return all.filter((t) => names.some((n) => n === t.name || micromatch.isMatch(t.name, n))).map(definitionOf);
    },
  };
}

export interface BuiltinToolDeps {
  readonly todoStore: TodoStore;
  /** Confines `shell` (docs/sandbox.md); `'none'` (chosen on purpose) runs it unconfined. Required: see createShellTool. */
  readonly sandbox: ShellSandbox | 'none';
  /** Environment variables passed to shell commands beyond the fixed allow-list (config `sandbox.env`). */
  readonly shellEnv?: readonly string[];
  /** The run's skills for the `skill` tool (docs/conventions.md#skills); default none. */
  readonly skills?: SkillCatalog;
  /** The rules' secret paths, workspace-relative: `grep` skips them while searching a folder (GrepToolOptions). Required. */
  readonly secretPath: (workspaceRelative: string) => boolean;
}

/** The workspace tools (docs/design.md#tools) (the collective tools live in src/runtime). */
export function createBuiltinTools(deps: BuiltinToolDeps): Tool[] {
  return [
    fileReadTool,
    fileWriteTool,
    fileEditTool,
    fileListTool,
    fileDeleteTool,
    globTool,
    createGrepTool({ secretPath: deps.secretPath }),
    createShellTool({ sandbox: deps.sandbox, passEnv: deps.shellEnv ?? [] }),
    ...createTodoTools(deps.todoStore),
    createSkillTool(deps.skills ?? NO_SKILLS),
  ];
}

/**
 * A fixed registry with tools that come and go behind it (MCP tools as servers start and stop;
 * the run's workspace catalog behind the collective tools, runtime/core.ts). `list()` returns the
 * same array until `extra()` returns a different one, so per-catalogue caches (the runtime's tool
 * definitions) stay valid between changes and refresh after one. Fixed tools win a name clash
 * (the MCP names are assigned around them anyway).
 */
export function withDynamicTools(base: ToolRegistry, extra: () => readonly Tool[]): ToolRegistry {
  let seen: readonly Tool[] | null = null;
  let all: readonly Tool[] = base.list();
  let byName = new Map<string, Tool>();
  const current = (): readonly Tool[] => {
    const added = extra();
    if (added !== seen) {
      seen = added;
      all = added.length === 0 ? base.list() : [...base.list(), ...added.filter((t) => !base.get(t.name))];
      byName = new Map(added.map((t) => [t.name, t]));
    }
    return all;
  };
  return {
    get: (name) => base.get(name) ?? (current(), byName.get(name)),
    list: () => current(),
    definitions(names) {
      const tools = current();
      if (names === undefined) return tools.map(toolDefinition);
      return tools.filter((t) => names.some((n) => n === t.name || micromatch.isMatch(t.name, n))).map(toolDefinition);
    },
  };
}

/**
 * A catalog holding tools built from it (list_tools lists the catalog it is in; the collective
 * tools' dependencies format requests of any tool): `build` gets the catalog and returns the
 * fixed tools, with whatever else it built; the workspace's tools (`workspace`, MCP tools coming
 * and going) follow them, as in `withDynamicTools`. `build` runs once, here, and must not read
 * the catalog while building (its tools and parts read it when called).
 */
export function catalogWith<T>(workspace: ToolCatalog, build: (catalog: ToolRegistry) => { tools: readonly Tool[]; parts: T }): { catalog: ToolRegistry; parts: T } {
  const view: ToolRegistry = {
    get: (name) => catalog.get(name),
    list: () => catalog.list(),
    definitions: (names) => catalog.definitions(names),
  };
  const built = build(view);
  const catalog = withDynamicTools(createToolRegistry(built.tools), () => workspace.list());
  return { catalog, parts: built.parts };
}
