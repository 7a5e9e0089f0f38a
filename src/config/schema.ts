import { z } from 'zod';
import { mcpServersSchema } from './mcp-schema';
import { notifySchema, remoteSchema } from './remote-schema';
import { hooksSchema, instructionsSchema } from './hooks-schema';
import { engineSchema } from './engine-schema';
import { lazySchema } from '../storage/lazy-schema';

/** Context management (docs/context.md): when to compact and what to keep. */
export const CONTEXT_DEFAULTS = { defaultWindow: 128_000, compactAt: 0.6, keepRecent: 0.3, evictToolResultsOver: 4000 } as const;

/**
 * The merged configuration (docs/design.md#providers, issues 2–7). Every object is strict so an unknown
 * key is found; the loader turns unknown keys into warnings, anything else into an error.
 *
 * Built at its first use (`lazySchema`, docs/performance.md#the-start-up-snapshot): a start
 * whose config is the shipped file alone takes its validated config from the snapshot
 * (`precompileShippedConfig`, config/load.ts) and builds none of its ~300 schemas.
 */
export const configSchema = lazySchema(() => {
  const providerName = z.enum(['auto', 'anthropic', 'openai', 'gemini', 'faux']);

  const providerSettings = z.strictObject({
    model: z.string().min(1).optional(),
    maxTokens: z.number().int().positive().optional(),
    baseUrl: z.string().url().optional(),
  });

  /** A host for `sandbox.network`: a DNS name, optionally `*.`-prefixed (docs/sandbox.md). */
  const sandboxHost = z
    .string()
    .regex(/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i, 'not a host name (e.g. registry.npmjs.org or *.github.com)');
  /** A variable name passed to shell commands (`NAME`, or `PREFIX*` for every name starting so). */
  const sandboxEnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, 'not a variable name (e.g. NODE_ENV, or NPM_CONFIG_* for a prefix)');
  /** A path hidden from sandboxed commands: absolute, `~/…`, or relative to the workspace. */
  const sandboxHidePath = z.string().min(1).refine((p) => !p.includes('\0') && p !== '~' && p !== '/' && p !== '.', 'not a path to hide (e.g. ~/.config/mytool or secrets/)');
  const sandboxSettings = z.strictObject({
    mode: z.enum(['auto', 'on', 'off']).default('auto'),
    network: z.union([z.enum(['none', 'all']), z.array(sandboxHost).min(1)]).default('none'),
    /** Environment variables shell commands get beyond PATH, HOME, USER, LANG, LC_*, TERM, TZ, TMPDIR (docs/sandbox.md#environment). */
    env: z.array(sandboxEnvName).default([]),
    /** Paths hidden beyond the built-in list (docs/sandbox.md#what-is-hidden). */
    hide: z.array(sandboxHidePath).default([]),
  });

  /** Context management (docs/context.md): when to compact and what to keep. */
  const contextSchema = z
    .strictObject({
      defaultWindow: z.number().int().min(1000).default(CONTEXT_DEFAULTS.defaultWindow),
      compactAt: z.number().gt(0).lt(1).default(CONTEXT_DEFAULTS.compactAt),
      keepRecent: z.number().gt(0).lt(1).default(CONTEXT_DEFAULTS.keepRecent),
      evictToolResultsOver: z.number().int().min(100).default(CONTEXT_DEFAULTS.evictToolResultsOver),
    })
    .refine((c) => c.keepRecent < c.compactAt, { message: 'keepRecent must be smaller than compactAt', path: ['keepRecent'] });

  /**
   * Spending limits (docs/context.md), all off unless set. Reaching one asks for approval
   * (toolName "budget"); approving raises the limit by `raiseBy` times its first value.
   */
  const budgetsSchema = z.strictObject({
    runUsd: z.number().positive().optional(),
    sessionUsd: z.number().positive().optional(),
    turnTokens: z.number().int().positive().optional(),
    raiseBy: z.number().positive().default(1),
  });

  return z.strictObject({
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
        gemini: providerSettings.default({}),
        faux: z.strictObject({ script: z.string().optional() }).default({}),
      })
      .default({ maxRetries: 2, idleTimeoutMs: 120_000, maxTokens: 8192, anthropic: {}, openai: {}, gemini: {}, faux: {} }),
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
    checkpoints: z
      .strictObject({
        /** Snapshot the workspace before each batch that may change it (docs/undo.md). */
        enabled: z.boolean().default(true),
        /** Files larger than this are not kept (undo cannot restore them). */
        maxFileBytes: z.number().int().min(1).max(1024 * 1024 * 1024).default(10 * 1024 * 1024),
        /** Checkpoints older than this many days are pruned. */
        keepDays: z.number().int().min(1).max(3650).default(14),
        /** The oldest checkpoints are pruned while the shadow repository is larger than this. */
        maxRepoBytes: z.number().int().min(1024 * 1024).default(2 * 1024 * 1024 * 1024),
      })
      .default({ enabled: true, maxFileBytes: 10 * 1024 * 1024, keepDays: 14, maxRepoBytes: 2 * 1024 * 1024 * 1024 }),
    /** Worktree isolation of delegated sessions when neither the call nor the participant says (docs/worktrees.md). */
    isolation: z.strictObject({ default: z.enum(['worktree', 'none']).default('none') }).default({ default: 'none' }),
    keymap: z.record(z.string(), z.union([z.string(), z.array(z.string())])).default({}),
    /** `sandbox: on` is short for `sandbox: { mode: on }` (docs/sandbox.md). */
    sandbox: z
      .preprocess((value) => (typeof value === 'string' ? { mode: value } : value), sandboxSettings)
      .default({ mode: 'auto', network: 'none', env: [], hide: [] }),
    // Context management and budgets (docs/context.md).
    context: contextSchema.default(CONTEXT_DEFAULTS),
    budgets: budgetsSchema.default({ raiseBy: 1 }),
    /** MCP servers by name (docs/mcp.md); merged per server with the workspace's `.mcp.json`. */
    mcpServers: mcpServersSchema().default({}),
    // Remote approvals and notifications (docs/remote.md).
    notify: notifySchema().default([]),
    remote: remoteSchema().default({}),
    // What users already have (docs/conventions.md): project instructions and Claude-Code-style hooks.
    instructions: instructionsSchema().default({ files: ['AGENTS.md', 'CLAUDE.md', 'GEMINI.md'] }),
    /** Validated here; loaded per layer (each layer's hooks run, workspace ones once trusted) by src/conventions/hooks. */
    hooks: hooksSchema().default({}),
    /** Where turns run: in-process, or on a Restate engine (docs/engine.md). */
    engine: engineSchema().default({ kind: 'in-process' }),
  });
});

export type LegionConfig = z.infer<ReturnType<typeof configSchema>>;
