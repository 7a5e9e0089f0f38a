import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkspaceTrust } from '../storage/workspace-trust';
import { z } from 'zod';
import { parseYamlSource } from '../config/yaml-source';
import { ONE_SHOT } from '../storage/zod-validate';
import { lazySchema } from '../storage/lazy-schema';
import { surelyAbsent } from '../storage/absent';

/** Prices of one model in USD per million tokens. */
export interface Rates {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
}

/** A model's rates, and optionally the rates of a call whose prompt is longer than `above.tokens`. */
export interface ModelPrice extends Rates {
  /** Long-context pricing: when input + cacheRead + cacheWrite tokens exceed `tokens`, every token of the call is billed at these rates. */
  readonly above?: Rates & { readonly tokens: number };
  /** Tokens the model accepts per request (`contextWindow` in models.yaml; docs/context.md). */
  readonly contextWindow?: number;
}

/** Token counts of one call (`usage` ProviderEvent / event). `inputTokens` excludes cache reads and writes. */
export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

/** A models file (`config/models.yaml`, `.legion/models.yaml`); built at its first use: a start with the shipped file takes its table from the snapshot (`precompileShippedModels`). */
export const modelsFileSchema = lazySchema(() => {
  const price = z.number().min(0);
  const entrySchema = z.strictObject({
    input: price,
    output: price,
    cacheRead: price.optional(),
    cacheWrite: price.optional(),
    above: z
      .strictObject({ tokens: z.number().int().positive(), input: price, output: price, cacheRead: price.optional(), cacheWrite: price.optional() })
      .optional(),
    aliases: z.array(z.string().min(1)).optional(),
    contextWindow: z.number().int().min(1000).optional(),
  });
  return z.strictObject({
    version: z.literal(1).default(1),
    models: z.record(z.string().min(1), entrySchema).default({}),
  });
});

export interface Pricing {
  /** The price of `model`, by exact id or alias, else by a base entry of a dated id; null when unknown. */
  priceOf(model: string): ModelPrice | null;
  /** USD cost of one call; null when the model has no price (never 0 for an unknown model). */
  costOf(model: string, usage: TokenUsage): number | null;
  /** The model's context window in tokens (same lookup as `priceOf`); null when not listed. */
  windowOf(model: string): number | null;
  readonly models: ReadonlyMap<string, ModelPrice>;
}

export type PricingLoad = { ok: true; pricing: Pricing } | { ok: false; error: string };

/** Suffixes a dated or aliased id may add to its base entry. */
const SUFFIX = /^(?:-\d{8}|-\d{4}-\d{2}-\d{2}|@\d{8}|-latest)$/;

export function createPricing(table: Readonly<Record<string, ModelPrice>>): Pricing {
  const models = new Map<string, ModelPrice>(Object.entries(table).map(([k, v]) => [k.toLowerCase(), v]));
  const priceOf = (model: string): ModelPrice | null => {
    const id = model.trim().toLowerCase();
    const exact = models.get(id);
    if (exact) return exact;
    let best: { key: string; price: ModelPrice } | null = null;
    for (const [key, value] of models) {
      if (id.startsWith(key) && SUFFIX.test(id.slice(key.length)) && (!best || key.length > best.key.length)) best = { key, price: value };
    }
    return best?.price ?? null;
  };
  return {
    models,
    priceOf,
    windowOf: (model) => priceOf(model)?.contextWindow ?? null,
    costOf(model, usage) {
      const base = priceOf(model);
      if (!base) return null;
      const prompt = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
      const p: Rates = base.above && prompt > base.above.tokens ? base.above : base;
      const micro =
        usage.inputTokens * p.input + usage.outputTokens * p.output + usage.cacheReadTokens * p.cacheRead + usage.cacheWriteTokens * p.cacheWrite;
      return micro / 1_000_000;
    },
  };
}

/** Parse one models file into a price table (aliases expanded); errors as `file:line: path: message`. */
export function parseModelsFile(text: string, file: string): { ok: true; table: Record<string, ModelPrice> } | { ok: false; error: string } {
  const kept = shippedTables.get(text);
  if (kept) return { ok: true, table: { ...kept } };
  const parsed = parseYamlSource(text, file);
  if (!parsed.ok) return parsed;
  const result = modelsFileSchema().safeParse(parsed.source.data, ONE_SHOT);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    return { ok: false, error: `${file}:${parsed.source.lineOf(path) ?? 1}: ${path.join('.') || '(root)'}: ${issue.message}` };
  }
  const table: Record<string, ModelPrice> = {};
  for (const [id, e] of Object.entries(result.data.models)) {
    // An omitted cache rate costs as much as plain input; an omitted long-context cache rate
    // scales the base cache rate by the long-context input multiplier.
    const cacheRead = e.cacheRead ?? e.input;
    const cacheWrite = e.cacheWrite ?? e.input;
    const scale = (rate: number, tierInput: number): number => (e.input > 0 ? (rate * tierInput) / e.input : tierInput);
    const p: ModelPrice = {
      input: e.input,
      output: e.output,
      cacheRead,
      cacheWrite,
      ...(e.contextWindow !== undefined ? { contextWindow: e.contextWindow } : {}),
      ...(e.above
        ? {
            above: {
              tokens: e.above.tokens,
              input: e.above.input,
              output: e.above.output,
              cacheRead: e.above.cacheRead ?? scale(cacheRead, e.above.input),
              cacheWrite: e.above.cacheWrite ?? scale(cacheWrite, e.above.input),
            },
          }
        : {}),
    };
    table[id] = p;
    for (const alias of e.aliases ?? []) table[alias] = p;
  }
  return { ok: true, table };
}

/**
 * Price tables parsed while the start-up snapshot was built (`precompileShippedModels`), by
 * their exact text: the shipped `config/models.yaml`, which every start parses before its first
 * frame (~2 ms). Entries are frozen (shared by every load of that text); any other text is parsed.
 */
const shippedTables = new Map<string, Readonly<Record<string, ModelPrice>>>();

/** Parse a shipped price file and keep its table for loads of the same text (src/cli/snapshot-warm.ts). Returns whether it parsed. */
export function precompileShippedModels(text: string, file: string): boolean {
  const parsed = parseModelsFile(text, file);
  if (!parsed.ok) return false;
  for (const price of Object.values(parsed.table)) {
    if (price.above) Object.freeze(price.above);
    Object.freeze(price);
  }
  shippedTables.set(text, Object.freeze(parsed.table));
  return true;
}

/**
 * The shipped prices, then the user's, then the project's (later files override by model id).
 * The project's only in a trusted workspace (docs/workspace-trust.md): a price of 0 would defeat budgets.
 */
export function defaultPricingFiles(appDir: string, workspaceRoot: string, home: string, trust: WorkspaceTrust): string[] {
  return [
    join(appDir, 'config', 'models.yaml'),
    join(process.env.XDG_CONFIG_HOME ?? join(home, '.config'), 'legion', 'models.yaml'),
    ...(trust.trusted ? [join(workspaceRoot, '.legion', 'models.yaml')] : []),
  ];
}

/** Load and merge price files; a missing file is skipped, a bad one is an error naming file and line. */
export async function loadPricing(files: readonly string[]): Promise<PricingLoad> {
  const table: Record<string, ModelPrice> = {};
  for (const file of files) {
    if (surelyAbsent(file)) continue;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      return { ok: false, error: `${file}: cannot read: ${(error as Error).message}` };
    }
    const parsed = parseModelsFile(text, file);
    if (!parsed.ok) return parsed;
    Object.assign(table, parsed.table);
  }
  return { ok: true, pricing: createPricing(table) };
}
