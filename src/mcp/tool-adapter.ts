import { z } from 'zod';
import type { Tool, ToolContext, ToolResult } from '../tools/types';
import { errorResult } from '../tools/result';
import type { McpProgress, McpToolInfo, ServerConnection } from './connection';
import { providerSafeSchema } from './json-schema';
import { convertCallResult } from './result';

const MAX_DESCRIPTION = 1024;

/** What the adapter needs around one call (passed in by the manager). */
export interface AdapterDeps {
  /** `tool-progress` for the call's row. */
  onProgress(context: ToolContext, progress: McpProgress): void;
  /** The call is running / finished: elicitations of its server go to its session meanwhile. */
  enter(context: ToolContext): () => void;
}

/** An MCP tool as a Legion tool, plus where it came from (for the approval's note and `legion mcp list`). */
export interface McpTool extends Tool<Record<string, unknown>> {
  readonly mcp: { readonly server: string; readonly tool: string; readonly annotations?: McpToolInfo['annotations'] };
}

/**
 * Input is any JSON object here: the provider sees the server's own schema (made
 * provider-safe) and the server validates; an invalid call comes back as the server's error.
 */
const anyObject = z.record(z.string(), z.unknown());

/** "read-only", "destructive", "idempotent", "open-world" from the server's hints. */
export function annotationText(annotations: McpToolInfo['annotations']): string {
  if (!annotations) return 'no annotations';
  const words: string[] = [];
  if (annotations.readOnlyHint) words.push('read-only');
  else if (annotations.destructiveHint === false) words.push('not destructive');
  else words.push('may be destructive');
  if (annotations.idempotentHint) words.push('idempotent');
  if (annotations.openWorldHint) words.push('open-world');
  return words.join(', ');
}

export function createMcpTool(legionName: string, info: McpToolInfo, connection: ServerConnection, deps: AdapterDeps): McpTool {
  const server = connection.name;
  const text = (info.description ?? info.title ?? info.annotations?.title ?? '').trim();
  const description = `${text || `Tool "${info.name}"`} (MCP server "${server}")`.slice(0, MAX_DESCRIPTION);
  return {
    name: legionName,
    description,
    schema: anyObject,
    inputJsonSchema: providerSafeSchema(info.inputSchema),
    approvalNote: `MCP server "${server}", tool "${info.name}" (${annotationText(info.annotations)}; hints from the server)`,
    mcp: { server, tool: info.name, ...(info.annotations ? { annotations: info.annotations } : {}) },
    // The server's hint (docs/undo.md): a tool marked read-only gets no checkpoint.
    readOnly: info.annotations?.readOnlyHint === true,
    keyArgument(input) {
      const first = Object.values(input ?? {}).find((v): v is string => typeof v === 'string');
      return first ?? (Object.keys(input ?? {}).length ? JSON.stringify(input).slice(0, 120) : undefined);
    },
    async execute(input, context): Promise<ToolResult> {
      const leave = deps.enter(context);
      try {
        const outcome = await connection.call(info.name, input, { signal: context.signal, onProgress: (p) => deps.onProgress(context, p) });
        if (!outcome.ok) return errorResult(outcome.kind === 'cancelled' ? `${legionName} was interrupted (the server was told to cancel)` : outcome.error);
        return convertCallResult(outcome.result);
      } finally {
        leave();
      }
    },
  };
}
