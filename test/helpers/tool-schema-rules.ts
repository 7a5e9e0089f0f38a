/**
 * The tool-definition rules the real APIs enforce (their documented limits and the 400
 * messages they answer with), so the vendor server refuses a tool list the way Anthropic and
 * OpenAI would: names `^[a-zA-Z0-9_-]{1,64}$` and unique, the input schema an object schema
 * (Anthropic: no `oneOf`/`anyOf`/`allOf` at its top level; OpenAI: every array has `items`).
 * Null when the tools are acceptable.
 */
type Json = Record<string, any>;
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function anthropicToolsError(body: Json): string | null {
  const tools: Json[] = Array.isArray(body?.tools) ? body.tools : [];
  const seen = new Set<string>();
  for (const [i, tool] of tools.entries()) {
    if (typeof tool.name !== 'string' || !NAME.test(tool.name)) return `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`;
    if (seen.has(tool.name)) return 'tools: Tool names must be unique.';
    seen.add(tool.name);
    const schema = tool.input_schema;
    if (typeof schema !== 'object' || schema === null || schema.type !== 'object') return `tools.${i}.custom.input_schema.type: Input should be 'object'`;
    for (const key of ['oneOf', 'anyOf', 'allOf']) {
      if (key in schema) return `tools.${i}.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level`;
    }
  }
  return null;
}

export function openaiToolsError(body: Json): string | null {
  const tools: Json[] = Array.isArray(body?.tools) ? body.tools : [];
  for (const tool of tools) {
    const fn = tool.function ?? {};
    if (typeof fn.name !== 'string' || !NAME.test(fn.name)) return `Invalid 'tools[].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`;
    const params = fn.parameters;
    if (params !== undefined && (typeof params !== 'object' || params === null || params.type !== 'object')) {
      return `Invalid schema for function '${fn.name}': schema must be a JSON Schema of 'type: "object"', got 'type: "${params?.type ?? 'None'}"'.`;
    }
    const missing = arrayWithoutItems(params, []);
    if (missing) return `Invalid schema for function '${fn.name}': In context=(${missing.map((p) => `'${p}'`).join(', ')}), array schema missing items.`;
  }
  return null;
}

function arrayWithoutItems(node: unknown, path: string[]): string[] | null {
  if (typeof node !== 'object' || node === null) return null;
  const n = node as Json;
  const isArray = n.type === 'array' || (Array.isArray(n.type) && n.type.includes('array'));
  if (isArray && n.items === undefined) return path;
  for (const [key, value] of Object.entries(n)) {
    if (key === 'properties' && typeof value === 'object' && value !== null) {
      for (const [prop, child] of Object.entries(value as Json)) {
        const found = arrayWithoutItems(child, [...path, 'properties', prop]);
        if (found) return found;
      }
    } else if (typeof value === 'object' && value !== null) {
      const found = arrayWithoutItems(value, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}
