import { SHIPPED_TOOLS, shippedTool } from '../../collective/tools/shipped';
import { inputFieldsOf } from '../../tools/registry';

/**
 * The tools rule files are checked against (docs/rules.md): a literal tool name must be one of
 * Legion's own (globs such as `mcp__*` and names in the `mcp__` namespace are not checked), and a
 * `match` field of a rule naming only known tools must be an input field of one of them. Both
 * come from the tools themselves (collective/tools/shipped.ts), the fields from their input schemas.
 */
export const KNOWN_TOOLS: readonly string[] = SHIPPED_TOOLS.map((tool) => tool.name);

const fields = new Map<string, readonly string[]>();

/** The input fields of the shipped tool `name` (its schema's properties), or undefined for another tool. */
export function knownToolFields(name: string): readonly string[] | undefined {
  const tool = shippedTool(name);
  if (!tool) return undefined;
  let known = fields.get(name);
  if (!known) fields.set(name, (known = inputFieldsOf(tool)));
  return known;
}

/** A shipped tool whose `path` is a workspace path (`Tool.pathFields`): file tools and searches (normalized before matching; absent means `.`). */
export function isFileTool(name: string): boolean {
  return shippedTool(name)?.pathFields?.includes('path') === true;
}

/** True when `glob` contains glob syntax (then it is not checked against KNOWN_TOOLS). */
export function hasGlobSyntax(glob: string): boolean {
  return /[*?[\]{}()!+@]/.test(glob);
}

/**
 * Whether an input field holds a workspace path: `path` of any tool, and for any tool a
 * field named `cwd`, `file`, `dir`, `directory` or ending in `Path`, `_path`, `File`, `Dir`.
 */
export function isPathField(field: string): boolean {
  return /^(path|cwd|file|dir|directory)$|(Path|_path|File|_file|Dir|_dir)$/.test(field);
}

/** Plain tool names: ASCII letters, digits, `_`, `-`, `.`, `:`. Anything else never matches a rule. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.:-]+$/;
