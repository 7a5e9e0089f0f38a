import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { mcpServersSchema, type McpServerEntry } from '../config/mcp-schema';
import { deepMerge, isPlainObject } from '../config/merge';
import { parseYamlSource } from '../config/yaml-source';
import { expandVars } from './expand';
import { ONE_SHOT } from '../storage/zod-validate';
import { userConfigDir } from '../storage/private-mode';
import { surelyAbsent } from '../storage/absent';

export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
export const DEFAULT_START_TIMEOUT_MS = 30_000;
export const DEFAULT_PING_INTERVAL_MS = 30_000;

/** What a stdio server runs, as its definition says (what trust pins the files of: src/mcp/trust-files.ts). */
export interface StdioDefinition {
  readonly kind: 'stdio'; readonly command: string; readonly args: readonly string[]; readonly env: Readonly<Record<string, string>>; readonly cwd: string;
}

export type McpTransportSpec =
  | (StdioDefinition & {
    /** A server the workspace does not define (never trust-checked): its bare `command` is never looked for in a folder of this workspace (src/tools/host-path.ts). */
    readonly outsideOf?: string;
    /**
     * Required: the user's config folder, npm's project for `npx` / `npm exec` instead of the
     * workspace (hostArgs, src/tools/host-path.ts), for every server: the user's own, and the
     * workspace's too, whose trust pins only the files its definition names, not a package npm
     * would take from the workspace's `node_modules` or an `.npmrc` there (docs/mcp.md#trust).
     */
    readonly hostPrefix: string;
  })
  | { readonly kind: 'http'; readonly url: string; readonly headers: Readonly<Record<string, string>> };

/** One server ready to start: merged over the layers, `${VAR}` expanded, complete. */
export interface McpServerSpec {
  readonly name: string;
  readonly transport: McpTransportSpec;
  readonly timeoutMs: number;
  readonly startTimeoutMs: number;
  /** Idle ready server pinged this often to notice it died; 0 = never (default DEFAULT_PING_INTERVAL_MS). */
  readonly pingIntervalMs?: number;
  /** Defined or changed by the workspace (`.mcp.json` or `.legion/config.yaml`): starts only once trusted. */
  readonly fromWorkspace: boolean;
  /** Hash of the entry as written (before expansion): a trust approval holds for exactly this definition. */
  readonly fingerprint: string;
}

export interface McpServerPlan {
  readonly servers: readonly McpServerSpec[];
  /** Names switched off with `disabled: true`. */
  readonly disabled: readonly string[];
  /** One line each: `.mcp.json` problems and servers that cannot start as written (those are skipped). */
  readonly warnings: readonly string[];
}

export type McpJsonRead = { readonly entries: Readonly<Record<string, McpServerEntry>>; readonly warnings: string[] };

/**
 * Read the workspace's `.mcp.json` (the format Claude Code and Gemini CLI read). Missing →
 * nothing. It is shared with other tools, so a problem never stops Legion: it is a
 * `file:line: …` warning and the offending server is skipped; unknown keys are ignored with
 * a warning.
 */
export async function readMcpJson(file: string): Promise<McpJsonRead> {
  if (surelyAbsent(file)) return { entries: {}, warnings: [] };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { entries: {}, warnings: [] };
    return { entries: {}, warnings: [`${file}: cannot read: ${(error as Error).message}`] };
  }
  const parsed = parseYamlSource(text, file, []); // JSON is YAML: one parser, with line numbers
  if (!parsed.ok) return { entries: {}, warnings: [parsed.error.replace('YAML syntax', 'JSON syntax')] };
  const data = parsed.source.data;
  const at = (path: (string | number)[]): string => `${file}:${parsed.source.lineOf(path) ?? 1}`;
  if (!isPlainObject(data) || (data.mcpServers !== undefined && !isPlainObject(data.mcpServers))) {
    return { entries: {}, warnings: [`${at(['mcpServers'])}: expected { "mcpServers": { "<name>": { … } } }`] };
  }
  const raw = (data.mcpServers ?? {}) as Record<string, unknown>;
  const entries: Record<string, McpServerEntry> = {};
  const warnings: string[] = [];
  for (const [name, value] of Object.entries(raw)) {
    const one = mcpServersSchema().safeParse({ [name]: value }, ONE_SHOT);
    if (one.success) {
      entries[name] = one.data[name]!;
      continue;
    }
    const unknownKeys = one.error.issues.filter((i) => i.code === 'unrecognized_keys');
    if (unknownKeys.length === one.error.issues.length && isPlainObject(value)) {
      const copy = { ...value };
      for (const issue of unknownKeys) {
        for (const key of (issue as { keys: string[] }).keys) {
          warnings.push(`${at(['mcpServers', name, key])}: unknown key "mcpServers.${name}.${key}" (ignored)`);
          delete copy[key];
        }
      }
      const again = mcpServersSchema().safeParse({ [name]: copy }, ONE_SHOT);
      if (again.success) {
        entries[name] = again.data[name]!;
        continue;
      }
    }
    const issue = one.error.issues.find((i) => i.code !== 'unrecognized_keys') ?? one.error.issues[0]!;
    const path = issue.path.map(String);
    warnings.push(`${at(['mcpServers', ...path])}: mcpServers.${path.join('.')}: ${issue.message} (server "${name}" skipped)`);
  }
  return { entries, warnings };
}

/** Names of the servers the project layer (`.legion/config.yaml`) mentions, read leniently (the loader reports its errors). */
export async function projectLayerServerNames(file: string): Promise<Set<string>> {
  try {
    const data: unknown = parseYaml(await readFile(file, 'utf8'));
    if (isPlainObject(data) && isPlainObject(data.mcpServers)) return new Set(Object.keys(data.mcpServers));
  } catch {
    // absent or unreadable: the config loader has its own say
  }
  return new Set();
}

/**
 * Merge `.mcp.json` (lowest) under the Legion layers' `mcpServers` (already merged by the
 * config loader), per server and key; drop disabled servers; expand `${VAR}` and
 * `${VAR:-default}` in command, args, env, cwd, url and headers; check each is complete.
 * A server that cannot start as written is a warning naming it, never an exception.
 */
export function planServers(options: {
  readonly fromConfig: Readonly<Record<string, McpServerEntry>>;
  readonly fromMcpJson: Readonly<Record<string, McpServerEntry>>;
  /** Names the project config layer mentions (trust needed like `.mcp.json`). */
  readonly projectNames: ReadonlySet<string>;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly workspaceRoot: string;
  /** Where the entries came from, for messages (".mcp.json", "config"). */
  readonly mcpJsonFile: string;
}): McpServerPlan {
  const names = [...new Set([...Object.keys(options.fromMcpJson), ...Object.keys(options.fromConfig)])];
  const servers: McpServerSpec[] = [];
  const disabled: string[] = [];
  const warnings: string[] = [];
  for (const name of names) {
    const entry = deepMerge({}, options.fromMcpJson[name] ?? {}, options.fromConfig[name] ?? {}) as McpServerEntry;
    if (entry.disabled) {
      disabled.push(name);
      continue;
    }
    const where = name in options.fromMcpJson ? `${options.mcpJsonFile}: ` : '';
    const built = buildSpec(name, entry, options);
    if (!built.ok) {
      warnings.push(`${where}mcpServers.${name}: ${built.error} (server not started)`);
      continue;
    }
    servers.push(built.spec);
  }
  return { servers, disabled, warnings };
}

function buildSpec(
  name: string,
  entry: McpServerEntry,
  options: Parameters<typeof planServers>[0],
): { ok: true; spec: McpServerSpec } | { ok: false; error: string } {
  const type = entry.type ?? (entry.url !== undefined && entry.command === undefined ? 'http' : 'stdio');
  const missing: string[] = [];
  const x = (value: string, field: string): string => {
    const expanded = expandVars(value, options.env);
    missing.push(...expanded.missing.map((v) => `\${${v}} in ${field}`));
    return expanded.text;
  };
  const xRecord = (record: Readonly<Record<string, string>> | undefined, field: string): Record<string, string> =>
    Object.fromEntries(Object.entries(record ?? {}).map(([k, v]) => [k, x(v, `${field}.${k}`)]));
  let transport: McpTransportSpec;
  if (type === 'stdio') {
    if (entry.command === undefined) return { ok: false, error: 'a stdio server needs "command" (or type "http" with "url")' };
    if (entry.url !== undefined || entry.headers !== undefined) return { ok: false, error: '"url"/"headers" belong to type "http", not a stdio server' };
    const cwd = entry.cwd === undefined ? options.workspaceRoot : x(entry.cwd, 'cwd');
    transport = {
      kind: 'stdio',
      command: x(entry.command, 'command'),
      args: (entry.args ?? []).map((a, i) => x(a, `args.${i}`)),
      env: xRecord(entry.env, 'env'),
      cwd: isAbsolute(cwd) ? cwd : resolve(options.workspaceRoot, cwd),
      hostPrefix: userConfigDir(options.env, options.env.HOME || homedir()),
      ...(isFromWorkspace(name, options) ? {} : { outsideOf: options.workspaceRoot }),
    };
  } else {
    if (entry.url === undefined) return { ok: false, error: 'an http server needs "url"' };
    if (entry.command !== undefined || entry.args !== undefined) return { ok: false, error: '"command"/"args" belong to a stdio server, not type "http"' };
    const url = x(entry.url, 'url');
    if (missing.length === 0 && !/^https?:\/\//i.test(url)) return { ok: false, error: `url must be http:// or https:// (got ${JSON.stringify(url.slice(0, 80))})` };
    transport = { kind: 'http', url, headers: xRecord(entry.headers, 'headers') };
  }
  if (missing.length) return { ok: false, error: `not set: ${missing.join(', ')}` };
  const { disabled: _d, timeoutMs, startTimeoutMs, pingIntervalMs, ...definition } = entry;
  return {
    ok: true,
    spec: {
      name,
      transport,
      timeoutMs: timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
      startTimeoutMs: startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
      pingIntervalMs: pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS,
      fromWorkspace: isFromWorkspace(name, options),
      fingerprint: fingerprintOf(definition),
    },
  };
}

function isFromWorkspace(name: string, options: Parameters<typeof planServers>[0]): boolean {
  return name in options.fromMcpJson || options.projectNames.has(name);
}

/** sha256 of the canonical JSON (sorted keys) of what decides which process or URL runs. */
export function fingerprintOf(definition: unknown): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex').slice(0, 32);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isPlainObject(value)) {
    return `{${Object.keys(value).sort().filter((k) => value[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export const mcpJsonPath = (workspaceRoot: string): string => join(workspaceRoot, '.mcp.json');

/** "stdio: node server.js --flag" / "http: https://host/mcp", for `legion mcp list` and the log. */
export function describeTransport(spec: McpTransportSpec): string {
  if (spec.kind === 'stdio') return `stdio: ${[spec.command, ...spec.args].join(' ')}`;
  return `http: ${spec.url}`;
}
