import { z } from 'zod';
import { lazySchema } from '../storage/lazy-schema';

/**
 * One MCP server entry as written in a config layer or in the workspace's `.mcp.json`
 * (docs/mcp.md). Partial on purpose: a layer may only disable or retime a server another
 * layer defines, so "stdio needs command, http needs url" is checked after the layers are
 * merged (src/mcp/servers.ts). Unknown keys are reported like any unknown config key.
 */
export const MCP_TRANSPORTS = ['stdio', 'http'] as const;

export const mcpServerEntrySchema = lazySchema(() => z.strictObject({
  type: z
    .enum(MCP_TRANSPORTS, { error: (issue) => `unknown transport ${JSON.stringify(issue.input)}: use "stdio" (command) or "http" (url)` })
    .optional(),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
  url: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  /** Off in this layer (a higher layer may turn it on again with `disabled: false`). */
  disabled: z.boolean().optional(),
  /** One tool call's limit (default 60000); progress notifications do not extend it. */
  timeoutMs: z.number().int().positive().optional(),
  /** Connecting and `initialize` (default 30000). */
  startTimeoutMs: z.number().int().positive().optional(),
  /** Ping an idle ready server this often to notice it died (default 30000; 0 turns it off). */
  pingIntervalMs: z.number().int().nonnegative().optional(),
}));

export type McpServerEntry = z.infer<ReturnType<typeof mcpServerEntrySchema>>;

export const mcpServersSchema = lazySchema(() => z.record(z.string().min(1).max(64), mcpServerEntrySchema()));
