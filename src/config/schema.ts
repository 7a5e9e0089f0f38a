import { z } from 'zod';
import { mcpServersSchema } from './mcp-schema';

/**
 * The merged configuration (docs/design.md#providers, issues 2–7). Every object is strict so an unknown
 * key is found; the loader turns unknown keys into warnings, anything else into an error.
 */
const providerName = z.enum(['auto', 'anthropic', 'openai', 'faux']);

const providerSettings = z.strictObject({
  model: z.string().min(1).optional(),
  maxTokens: z.number().int().positive().optional(),
  baseUrl: z.string().url().optional(),
});

export const configSchema = z.strictObject({
  version: z.literal(1).default(1),
  provider: providerName.default('auto'),
  model: z.string().min(1).nullable().default(null),
  providers: z
    .strictObject({
      maxRetries: z.number().int().min(0).max(10).default(2),
      idleTimeoutMs: z.number().int().positive().default(120_000),
      maxTokens: z.number().int().positive().default(8192),
      anthropic: providerSettings.default({}),
      openai: providerSettings.default({}),
      faux: z.strictObject({ script: z.string().optional() }).default({}),
    })
    .default({ maxRetries: 2, idleTimeoutMs: 120_000, maxTokens: 8192, anthropic: {}, openai: {}, faux: {} }),
  runtime: z
    .strictObject({
      maxIterations: z.number().int().positive().default(25),
      maxDepth: z.number().int().positive().default(10),
      shellTimeoutMs: z.number().int().positive().default(120_000),
      toolOutputLimit: z.number().int().positive().default(30_000),
    })
    .default({ maxIterations: 25, maxDepth: 10, shellTimeoutMs: 120_000, toolOutputLimit: 30_000 }),
  escalation: z
    .strictObject({
      llm: z
        .strictObject({
          enabled: z.boolean().default(false),
          provider: providerName.optional(),
          model: z.string().optional(),
          minConfidence: z.number().min(0).max(1).default(0.9),
        })
        .default({ enabled: false, minConfidence: 0.9 }),
      denialLoopThreshold: z.number().int().positive().default(3),
    })
    .default({ llm: { enabled: false, minConfidence: 0.9 }, denialLoopThreshold: 3 }),
  ui: z
    .strictObject({
      maxLanes: z.number().int().min(1).max(4).default(4),
      autoOpenLanes: z.boolean().default(true),
      bell: z.boolean().default(true),
      maxFps: z.number().int().min(1).max(120).default(30),
      plain: z.boolean().default(false),
    })
    .default({ maxLanes: 4, autoOpenLanes: true, bell: true, maxFps: 30, plain: false }),
  keymap: z.record(z.string(), z.union([z.string(), z.array(z.string())])).default({}),
  /** MCP servers by name (docs/mcp.md); merged per server with the workspace's `.mcp.json`. */
  mcpServers: mcpServersSchema.default({}),
});

export type LegionConfig = z.infer<typeof configSchema>;
