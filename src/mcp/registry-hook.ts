import micromatch from 'micromatch';
import type { Tool } from '../tools/types';
import { toolDefinition, type ToolRegistry } from '../tools/registry';

/**
 * The tool registry with MCP tools added behind the fixed ones. `list()` returns the same
 * array until `extra()` returns a different one, so per-catalogue caches (the runtime's tool
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
