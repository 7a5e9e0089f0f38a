import { isPlainObject } from '../config/merge';

type Schema = Record<string, unknown>;

const COMPOSITIONS = ['oneOf', 'anyOf', 'allOf'] as const;
const MAX_DEPTH = 40;

/**
 * An MCP tool's `inputSchema` as Anthropic and OpenAI accept it (docs/mcp.md, "Schemas"):
 * - the top level is `{ type: "object", properties: {…} }`; Anthropic refuses `oneOf`,
 *   `anyOf`, `allOf` there, so their object branches are folded into one `properties` (what
 *   the branches require is left to the server, which validates anyway);
 * - `$schema` and `$id` are dropped, every array schema gets `items` (OpenAI refuses an
 *   array without it), a `type` list such as `["string","null"]` is kept (both accept it);
 * - anything deeper than 40 levels or not a JSON object becomes `{}` (any value).
 * Pure; never throws.
 */
export function providerSafeSchema(input: unknown): Schema {
  const root: Schema = isPlainObject(input) ? { ...input } : {};
  delete root.$schema;
  delete root.$id;
  let properties: Schema = isPlainObject(root.properties) ? { ...root.properties } : {};
  let required = Array.isArray(root.required) ? root.required.filter((r): r is string => typeof r === 'string') : [];
  let folded = false;
  for (const key of COMPOSITIONS) {
    const branches = root[key];
    if (branches === undefined) continue;
    delete root[key];
    folded = true;
    if (!Array.isArray(branches)) continue;
    for (const branch of branches) {
      if (isPlainObject(branch) && isPlainObject(branch.properties)) properties = { ...branch.properties, ...properties };
      if (key === 'allOf' && isPlainObject(branch) && Array.isArray(branch.required)) {
        required = [...required, ...branch.required.filter((r): r is string => typeof r === 'string')];
      }
    }
  }
  if (root.type !== 'object') folded ||= root.type !== undefined;
  const out: Schema = { ...clean(root, 0), type: 'object', properties: cleanProperties(properties, 0) };
  delete out.not;
  const known = required.filter((r, i) => r in properties && required.indexOf(r) === i);
  if (known.length) out.required = known;
  else delete out.required;
  if (folded && typeof out.description !== 'string') out.description = 'Arguments (the server checks the exact combination).';
  return out;
}

function cleanProperties(properties: Schema, depth: number): Schema {
  return Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, clean(v, depth + 1)]));
}

function clean(node: unknown, depth: number): Schema {
  if (!isPlainObject(node) || depth > MAX_DEPTH) return {};
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema' || key === '$id') continue;
    if (key === 'properties' || key === '$defs' || key === 'definitions' || key === 'patternProperties') {
      out[key] = isPlainObject(value) ? cleanProperties(value, depth) : {};
    } else if ((key === 'items' || key === 'additionalProperties' || key === 'not' || key === 'contains') && isPlainObject(value)) {
      out[key] = clean(value, depth + 1);
    } else if ((COMPOSITIONS as readonly string[]).includes(key) || key === 'prefixItems') {
      out[key] = Array.isArray(value) ? value.map((v) => clean(v, depth + 1)) : [];
    } else {
      out[key] = value;
    }
  }
  const isArray = out.type === 'array' || (Array.isArray(out.type) && out.type.includes('array'));
  if (isArray && out.items === undefined) out.items = {};
  return out;
}
