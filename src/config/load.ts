import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { configSchema, type LegionConfig } from './schema';
import { parseYamlSource, type YamlSource } from './yaml-source';
import { deepMerge, deletePath, hasPath, isPlainObject } from './merge';
import { ONE_SHOT } from '../storage/zod-validate';
import { deepFreeze } from '../storage/deep-freeze';
import type { WorkspaceTrust } from '../storage/workspace-trust';
import { surelyAbsent } from '../storage/absent';

export interface ConfigFiles {
  /** Shipped defaults: `config/legion.yaml` of the package. */
  readonly defaults: string;
  /** `~/.config/legion/config.yaml` */
  readonly user: string;
  /** `.legion/config.yaml` of the workspace; null when the workspace is not trusted (docs/workspace-trust.md): it is ignored. */
  readonly project: string | null;
}

export type ConfigLoad =
  | { ok: true; config: LegionConfig; warnings: string[]; files: string[] }
  | { ok: false; error: string };

/**
 * The config layers of a workspace. `trust` is required: the project layer is read only from a
 * trusted workspace (docs/workspace-trust.md), so no caller can load it without deciding.
 */
export function defaultConfigFiles(appDir: string, workspaceRoot: string, home: string, trust: WorkspaceTrust): ConfigFiles {
  return {
    defaults: join(appDir, 'config', 'legion.yaml'),
    user: join(process.env.XDG_CONFIG_HOME ?? join(home, '.config'), 'legion', 'config.yaml'),
    project: trust.trusted ? join(workspaceRoot, '.legion', 'config.yaml') : null,
  };
}

async function readOptional(file: string): Promise<string | null> {
  if (surelyAbsent(file)) return null;
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`${file}: cannot read: ${(error as Error).message}`);
  }
}

/**
 * Load and validate the layered config: defaults ← user ← project. Errors name the file,
 * the line and the key path in one line. Unknown keys are warnings naming the key and
 * are ignored; nothing else is.
 */
export async function loadConfig(files: ConfigFiles): Promise<ConfigLoad> {
  const texts: { file: string; text: string }[] = [];
  for (const file of [files.defaults, files.user, files.project]) {
    if (file === null) continue;
    let text: string | null;
    try {
      text = await readOptional(file);
    } catch (error) {
      return { ok: false, error: (error as Error).message };
    }
    if (text !== null) texts.push({ file, text });
  }
  const kept = texts.length === 1 && texts[0]!.file === files.defaults ? shippedConfigs.get(texts[0]!.text) : undefined;
  if (kept !== undefined) return { ok: true, config: structuredClone(kept), warnings: [], files: [files.defaults] };
  const sources: YamlSource[] = [];
  for (const { file, text } of texts) {
    const parsed = parseYamlSource(text, file);
    if (!parsed.ok) return { ok: false, error: parsed.error };
    if (!isPlainObject(parsed.source.data)) {
      return { ok: false, error: `${file}:1: the config must be a mapping of keys to values` };
    }
    sources.push(parsed.source);
  }
  return validateLayers(sources);
}

/**
 * Configs validated while the start-up snapshot was built (`precompileShippedConfig`), by the
 * exact text of the shipped `config/legion.yaml`: a start whose only layer is that file (no
 * user or project config, the usual case) takes a copy of it and builds none of the config's
 * ~300 zod schemas (docs/performance.md#the-start-up-snapshot). Frozen, shared by no load;
 * any other set of layers, or another text, is validated.
 */
const shippedConfigs = new Map<string, LegionConfig>();

/**
 * Validate the shipped config's text as the only layer and keep the result for loads of exactly
 * that text (src/cli/snapshot-warm.ts). Returns whether it validated without a warning.
 */
export function precompileShippedConfig(text: string, file: string): boolean {
  const parsed = parseYamlSource(text, file);
  if (!parsed.ok || !isPlainObject(parsed.source.data)) return false;
  const loaded = validateLayers([parsed.source]);
  if (!loaded.ok || loaded.warnings.length > 0) return false;
  shippedConfigs.set(text, deepFreeze(loaded.config));
  return true;
}

/** Validate already-parsed layers (lowest priority first). Exported for tests and rules. */
export function validateLayers(sources: readonly YamlSource[]): ConfigLoad {
  const warnings: string[] = [];
  const merged = deepMerge({}, ...sources.map((s) => structuredClone(s.data))) as Record<string, unknown>;
  for (let attempt = 0; attempt < 50; attempt++) {
    const result = configSchema().safeParse(merged, ONE_SHOT);
    if (result.success) return { ok: true, config: result.data, warnings, files: sources.map((s) => s.file) };
    const unknown = result.error.issues.filter((i) => i.code === 'unrecognized_keys');
    if (unknown.length === 0) {
      const issue = mostSpecific(result.error.issues[0]!);
      const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
      return { ok: false, error: `${locate(sources, path)}: ${path.join('.') || '(root)'}: ${issue.message}` };
    }
    for (const issue of unknown) {
      for (const key of (issue as { keys: string[] }).keys) {
        const path = [...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)), key];
        warnings.push(`${locate(sources, path)}: unknown config key "${path.join('.')}" (ignored)`);
        deletePath(merged, path);
      }
    }
  }
  return { ok: false, error: 'config: too many unknown keys' };
}

type Issue = { path: PropertyKey[]; message: string; code?: string; errors?: Issue[][] };

/**
 * A union failure ("Invalid input") says little; report instead the first issue of the
 * branch that got furthest (longest path), with its path made absolute.
 */
function mostSpecific(issue: Issue): Issue {
  if (issue.code !== 'invalid_union' || !issue.errors?.length) return issue;
  let best: Issue | null = null;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (first && (!best || first.path.length > best.path.length)) best = first;
  }
  return best ? mostSpecific({ ...best, path: [...issue.path, ...best.path] }) : issue;
}

/** `file:line` of the highest-priority layer that sets `path` (or its nearest parent). */
function locate(sources: readonly YamlSource[], path: readonly (string | number)[]): string {
  for (let depth = path.length; depth >= 0; depth--) {
    const prefix = path.slice(0, depth);
    for (let i = sources.length - 1; i >= 0; i--) {
      const source = sources[i]!;
      if (hasPath(source.data, prefix)) return `${source.file}:${source.lineOf(path) ?? 1}`;
    }
  }
  const last = sources[sources.length - 1];
  return last ? `${last.file}:1` : 'config';
}
