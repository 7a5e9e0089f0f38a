import { createHash } from 'node:crypto';

/** What Anthropic and OpenAI both accept as a tool name. */
export const PROVIDER_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX = 64;

/** Characters outside `[a-zA-Z0-9_-]` become `_`. */
export function sanitizePart(part: string): string {
  const clean = part.replace(/[^a-zA-Z0-9_-]/g, '_');
  return clean.length > 0 ? clean : '_';
}

const shortHash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 6);

/**
 * `mcp__<server>__<tool>`, sanitized and at most 64 characters: a name too long keeps its
 * head and gets a hash of the full name, so two long names sharing a head stay apart.
 */
export function mcpToolName(server: string, tool: string): string {
  const name = `mcp__${sanitizePart(server)}__${sanitizePart(tool)}`;
  if (name.length <= MAX) return name;
  return `${name.slice(0, MAX - 7)}_${shortHash(`${server}\u0000${tool}`)}`;
}

/**
 * Legion names for one server's tools, unique among themselves and against `taken`
 * (names already in use): a collision after sanitizing gets a hash suffix.
 * Returns original tool name → Legion name.
 */
export function assignToolNames(server: string, tools: readonly string[], taken: ReadonlySet<string>): Map<string, string> {
  const used = new Set(taken);
  const out = new Map<string, string>();
  for (const tool of tools) {
    let name = mcpToolName(server, tool);
    if (used.has(name)) {
      const base = name.slice(0, MAX - 7);
      let salt = 0;
      do {
        name = `${base}_${shortHash(`${server}\u0000${tool}\u0000${salt++}`)}`;
      } while (used.has(name));
    }
    used.add(name);
    out.set(tool, name);
  }
  return out;
}
