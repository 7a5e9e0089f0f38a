import type { z } from 'zod';
import type { ToolFailureKind } from '../events/types';

/** What a tool returns. Failures are values: `isError: true` with a message the model can read. */
export interface ToolResult {
  readonly content: string;
  readonly isError?: boolean;
  /** One short line for UI rows and `tool-call-end.summary` (defaults to the first line of content). */
  readonly summary?: string;
  /** Why it failed, when `isError` (the runtime sets it; a tool's own error result counts as `failed`). */
  readonly failure?: ToolFailureKind;
}

/** Everything a tool may use, passed in (no globals). */
export interface ToolContext {
  /** Absolute, realpath'd workspace root. */
  readonly workspaceRoot: string;
  readonly runId: string;
  readonly sessionId: string;
  /** The participant calling the tool. */
  readonly participantId: string;
  /** Call chain, outermost first, ending with `participantId` (e.g. ['user', 'ur-agent', 'scribe']). */
  readonly chain: readonly string[];
  readonly toolUseId: string;
  /** Aborted on cancel: a tool must stop promptly (kill processes, stop reading). */
  readonly signal: AbortSignal;
  readonly limits: { readonly shellTimeoutMs: number; readonly toolOutputLimit: number };
  /**
   * Ask the user on behalf of this call, in the calling agent's user lane (`<agent> → user ·
   * <sessionName>`), and wait for the reply (an MCP server's elicitation, docs/mcp.md). An error
   * result when nobody answers (cancelled, a participant outside the runtime).
   */
  askUser(question: string, ask: { readonly sessionName: string; readonly signal: AbortSignal }): Promise<ToolResult>;
}

/**
 * A tool. `input` is validated with `schema` before `execute` is called (invalid input →
 * error result quoting the problem, never a call). `execute` must not throw for expected
 * failures; anything it does throw is caught by the executor and turned into an error result.
 */
export interface Tool<I = any> {
  readonly name: string;
  readonly description: string;
  readonly schema: z.ZodType<I>;
  /** What a call is about (path, command, target…), as every list shows it (tools/key-argument.ts). */
  keyArgument(input: I): string | undefined;
  /** Input fields that hold workspace paths (normalized before rules match them). */
  readonly pathFields?: readonly string[];
  /** For tools that start processes: true when every call runs in the OS sandbox (docs/sandbox.md),
   *  false when it runs unconfined. Absent for tools that start none. Shown in approvals and tool rows. */
  readonly sandboxed?: boolean;
  /**
   * The call's effects are turns of other sessions, whose own steps are journaled in engine mode
   * (docs/engine.md#delegation): the call itself is not a journaled step (a step cannot contain steps).
   */
  readonly startsTurns?: boolean;
  /**
   * Changes nothing (an MCP tool: the server's `readOnlyHint`): no checkpoint before it
   * (docs/undo.md), and a call that was running when Legion stopped runs again at the next start.
   */
  readonly readOnly?: boolean;
  /** Never changes the workspace's files (its writes, if any, are under `.legion/`): no checkpoint before it. */
  readonly keepsWorkspaceFiles?: boolean;
  /**
   * The JSON Schema providers see, when the tool brings its own (MCP tools, src/mcp/): then
   * `schema` only checks the input's outer shape and the tool validates the rest itself.
   */
  readonly inputJsonSchema?: Record<string, unknown>;
  /** One line added to an approval request's reason (MCP: server, tool and its annotations). */
  readonly approvalNote?: string;
  execute(input: I, context: ToolContext): Promise<ToolResult>;
}

/** Whether a call of `tool` may change the workspace's files: the batch gets a checkpoint (docs/undo.md). */
export function mayChangeFiles(tool: Pick<Tool, 'readOnly' | 'keepsWorkspaceFiles'>): boolean {
  return tool.readOnly !== true && tool.keepsWorkspaceFiles !== true;
}

/** The tools known to the process (builtin + collective). */
export interface ToolCatalog {
  get(name: string): Tool | undefined;
  list(): readonly Tool[];
}
