import { access, constants, readdir, readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { LegionConfig } from '../../config/schema';
import type { Layout } from '../../storage/layout';
import { sharedPaths } from '../../storage/private-mode';
import type { Pricing } from '../../providers/pricing';
import { KEY_VARIABLE } from '../../providers/failure';
import { probeProvider, type ProbeTarget } from './probe';

/** One line of `legion doctor`: what was checked, what was found, and the fix when it failed. */
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  readonly fix?: string;
}

const pass = (name: string, detail: string): Check => ({ name, ok: true, detail });
const fail = (name: string, detail: string, fix: string): Check => ({ name, ok: false, detail, fix });

export function checkNode(version: string, minimumMajor = 20): Check {
  const major = Number(/^v?(\d+)/.exec(version)?.[1] ?? 0);
  return major >= minimumMajor
    ? pass('node', `Node ${version} (needs ${minimumMajor} or later)`)
    : fail('node', `Node ${version} is too old (needs ${minimumMajor} or later)`, `install Node ${minimumMajor} or later (https://nodejs.org)`);
}

/** Which provider keys are set: names only, never values. */
export function checkKeys(env: Readonly<Record<string, string | undefined>>): Check {
  const set = Object.values(KEY_VARIABLE).filter((name) => (env[name] ?? '').trim() !== '');
  const local = (env.OPENAI_BASE_URL ?? '').trim() !== '';
  if (set.length > 0) return pass('keys', `provider keys set: ${set.join(', ')}`);
  if (local) return pass('keys', 'no provider key set; OPENAI_BASE_URL points at a compatible server');
  return fail('keys', 'no provider key set (Legion runs its scripted demo)', `set ${Object.values(KEY_VARIABLE).join(', ').replace(/, ([^,]*)$/, ' or $1')}`);
}

export async function checkProvider(target: ProbeTarget | null, label: string, fetcher: typeof fetch, timeoutMs: number): Promise<Check> {
  if (!target) return pass('provider', `${label}: no model is called`);
  const probe = await probeProvider(target, fetcher, timeoutMs);
  if (probe.ok) return pass('provider', `${label} answers (${probe.detail})`);
  return fail('provider', `${label} does not answer: ${probe.detail}`, probe.fix);
}

export function checkModel(model: string, pricing: Pricing | null, pricingError: string | null): Check[] {
  if (!pricing) return [fail('price', `prices not loaded: ${pricingError ?? 'unknown error'}`, 'fix the models.yaml file named above')];
  const price = pricing.priceOf(model);
  const fix = `add ${model} to ~/.config/legion/models.yaml or .legion/models.yaml (see config/models.yaml for the shape)`;
  return [
    price
      ? pass('price', `${model}: $${price.input} input / $${price.output} output per million tokens`)
      : fail('price', `${model}: no price known (costs show as unknown)`, fix),
    price?.contextWindow
      ? pass('context', `${model}: context window ${price.contextWindow.toLocaleString('en-US')} tokens`)
      : fail('context', `${model}: context window not known`, `add contextWindow for ${model} to ~/.config/legion/models.yaml or .legion/models.yaml`),
  ];
}

/** A command-line tool: its version line, or why not. */
export type ToolProbe = (command: string, args: readonly string[]) => { ok: true; output: string } | { ok: false; error: string };

export function checkTool(name: string, command: string, args: readonly string[], usedFor: string, install: string, run: ToolProbe): Check {
  const got = run(command, args);
  if (got.ok) return pass(name, `${command}: ${got.output.split('\n').find((l) => l.trim())?.trim() ?? 'present'} (${usedFor})`);
  return fail(name, `${command} not found (${usedFor})`, install);
}

export function checkMcp(servers: readonly string[] | null): Check {
  if (!servers || servers.length === 0) return pass('mcp', 'MCP servers: none configured');
  return pass('mcp', `MCP servers configured: ${servers.join(', ')}`);
}

/** `.legion/` writable and private (nothing readable by other users). */
export async function checkWorkspaceFolder(layout: Layout): Promise<Check> {
  try {
    await access(layout.legionDir);
  } catch {
    return pass('workspace', `${layout.legionDir} not created yet (legion init, or the first start, creates it private)`);
  }
  try {
    await access(layout.legionDir, constants.W_OK);
  } catch {
    return fail('workspace', `${layout.legionDir} is not writable`, `check its owner and permissions (chmod u+w ${layout.legionDir})`);
  }
  const shared = await sharedPaths(layout.legionDir);
  if (shared.length > 0) {
    return fail('workspace', `${layout.legionDir}: ${shared.length} path(s) readable by other users (first: ${shared[0]})`, `start legion once (it tightens them), or chmod -R go-rwx ${layout.legionDir}`);
  }
  return pass('workspace', `${layout.legionDir} is writable and private`);
}

/** Run locks left by a Legion that is gone (on this host). */
export async function checkLocks(layout: Layout, isAlive: (pid: number) => boolean, host = hostname()): Promise<Check> {
  let runs: string[] = [];
  try {
    runs = await readdir(layout.runsDir);
  } catch {
    return pass('locks', 'no runs yet');
  }
  const stale: string[] = [];
  const held: string[] = [];
  for (const run of runs.sort()) {
    let text: string;
    try {
      text = await readFile(layout.runLock(run), 'utf8');
    } catch {
      continue;
    }
    let holder: { pid?: unknown; hostname?: unknown } = {};
    try { holder = JSON.parse(text) as typeof holder; } catch { /* unreadable: stale */ }
    const pid = typeof holder.pid === 'number' ? holder.pid : null;
    if (pid !== null && holder.hostname !== host) held.push(`${run} (pid ${pid} on ${String(holder.hostname)})`);
    else if (pid !== null && isAlive(pid)) held.push(`${run} (pid ${pid})`);
    else stale.push(run);
  }
  if (stale.length > 0) {
    const first = layout.runLock(stale[0]!);
    return fail('locks', `stale run lock(s), their Legion is gone: ${stale.join(', ')}`, `harmless: the next start of that run takes it over; or delete ${stale.length === 1 ? first : join(layout.runsDir, '<run>', 'lock')}`);
  }
  return pass('locks', held.length > 0 ? `runs in use: ${held.join(', ')}` : 'no stale run lock');
}

/** For `legion doctor` without `--json`: one ✓/✗ line per check, the fix under each ✗. */
export function formatChecks(checks: readonly Check[]): string {
  return checks.map((c) => (c.ok ? `✓ ${c.detail}\n` : `✗ ${c.detail}\n    fix: ${c.fix}\n`)).join('');
}

/** Read a config value without depending on a config key another module may add. */
export function mcpServerNames(config: LegionConfig): string[] | null {
  const servers = (config as { mcpServers?: unknown }).mcpServers;
  return servers && typeof servers === 'object' ? Object.keys(servers) : null;
}
