import type { Tool, ToolContext, ToolResult } from './types';
import { resolveWorkspacePath, clip } from './path-safety';
import { capText } from './output-cap';
import { errorResult } from './result';

const MAX_ISSUES_SHOWN = 5;
const MAX_SUMMARY_CHARS = 200;

export type PathConfinement =
  | { readonly ok: true; readonly input: unknown }
  | { readonly ok: false; readonly error: string };

/**
 * Check every `pathFields` entry of an already-validated input against the workspace
 * (resolveWorkspacePath). On success, `input` is a copy whose path fields hold the
 * normalized workspace-relative path (`relative`), the form rules should match.
 */
export async function confinePathFields(tool: Tool, input: unknown, workspaceRoot: string): Promise<PathConfinement> {
  const fields = tool.pathFields ?? [];
  if (fields.length === 0 || typeof input !== 'object' || input === null) return { ok: true, input };
  const normalized: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const field of fields) {
    const value = normalized[field];
    if (value === undefined) continue;
    if (typeof value !== 'string') return { ok: false, error: `${field}: must be a string` };
    const resolved = await resolveWorkspacePath(workspaceRoot, value);
    if (!resolved.ok) return { ok: false, error: resolved.error };
    normalized[field] = resolved.relative;
  }
  return { ok: true, input: normalized };
}

interface Issue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/** "invalid input for <tool>: field.path: message; …" — what the model needs to correct the call. */
export function describeInvalidInput(toolName: string, issues: readonly Issue[]): string {
  const shown = issues.slice(0, MAX_ISSUES_SHOWN).map((issue) => {
    const where = issue.path.length > 0 ? issue.path.map(String).join('.') : '(input)';
    return `${clip(where, 100)}: ${clip(issue.message, 300)}`;
  });
  const more = issues.length > MAX_ISSUES_SHOWN ? ` (and ${issues.length - MAX_ISSUES_SHOWN} more problems)` : '';
  return `invalid input for ${toolName}: ${shown.join('; ')}${more}`;
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim().length > 0) ?? '';
  return clip(line.trim(), MAX_SUMMARY_CHARS);
}

/** Cap the content at the output limit (head and tail) and fill a one-line summary. */
function finish(result: ToolResult, limit: number): ToolResult {
  const content = capText(result.content, Math.max(1000, limit));
  const summary = result.summary !== undefined ? clip(result.summary.replace(/\s*\n\s*/g, ' '), MAX_SUMMARY_CHARS) : firstLine(content);
  return result.isError ? { content, isError: true, summary } : { content, summary };
}

/**
 * Run one tool call: validate `rawInput` with the tool's zod schema (invalid → error result
 * naming field path and problem, the tool is not called), confine every path field
 * (refusal → error result), then execute. Any throw becomes an error result; the content is
 * capped at `context.limits.toolOutputLimit` characters and `summary` is always set.
 * Never throws, never rejects.
 */
export async function executeTool(tool: Tool, rawInput: unknown, context: ToolContext): Promise<ToolResult> {
  const limit = context.limits.toolOutputLimit;
  try {
    const parsed = tool.schema.safeParse(rawInput);
    if (!parsed.success) return finish(errorResult(describeInvalidInput(tool.name, parsed.error.issues)), limit);
    const confined = await confinePathFields(tool, parsed.data, context.workspaceRoot);
    if (!confined.ok) return finish(errorResult(confined.error), limit);
    if (context.signal.aborted) return finish(errorResult(`${tool.name} interrupted before it started`), limit);
    const result: unknown = await tool.execute(parsed.data, context);
    if (typeof result !== 'object' || result === null || typeof (result as ToolResult).content !== 'string') {
      return finish(errorResult(`${tool.name} returned no usable result`), limit);
    }
    return finish(result as ToolResult, limit);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return finish(errorResult(`${tool.name} failed: ${clip(message, 2000)}`), limit);
  }
}
