import { spawnSync } from 'node:child_process';
import { homedir } from 'node:os';
import type { Command } from '../command';
import { LegionError } from '../../errors';
import { defaultConfigFiles, loadConfig } from '../../config/load';
import { workspaceTrustOf } from '../workspace-root';
import { checkWorkspaceTrustState } from '../doctor/trust-check';
import { configSchema } from '../../config/schema';
import { layoutFor } from '../../storage/layout';
import { createProviderRegistry } from '../../providers/select';
import { defaultPricingFiles, loadPricing } from '../../providers/pricing';
import { pidIsAlive } from '../../storage/lock-file';
import { checkKeys, checkLocks, checkMcp, checkModel, checkNode, checkProvider, checkTool, checkWorkspaceFolder, formatChecks, mcpServerNames, type Check, type ToolProbe } from '../doctor/checks';
import { probeTarget } from '../doctor/probe';
import { checkEngine, checkEngineSandbox } from '../doctor/engine-check';
import { checkConventions } from '../doctor/conventions-check';
import { hostPath } from '../../tools/host-path';

const DEFAULT_TIMEOUT_MS = 5000;

/** Runs `command` found on `path` (the user's PATH without the workspace's folders: src/tools/host-path.ts). */
const toolRunner = (path: string | undefined): ToolProbe => (command, args) => {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: path ?? '' } });
  if (r.error) return { ok: false, error: r.error.message };
  return r.status === 0 ? { ok: true, output: `${r.stdout}${r.stderr}` } : { ok: false, error: `exit ${r.status}` };
};

/**
 * `legion doctor`: what works and what to fix (docs/cli-conventions.md#legion-doctor). One ✓/✗
 * line per check with the fix under each ✗; exit 1 if any ✗; `--json` prints
 * `{ ok, checks: [{ name, ok, detail, fix? }] }`. Reads only; the provider check sends one
 * request for the model list (no tokens billed). Key values are never printed.
 */
export const doctorCommand: Command = {
  name: 'doctor',
  usage: 'legion doctor [--json] [--timeout <ms>]',
  summary: 'check Node, keys, the provider, the model, tools, MCP, .legion/, locks, instructions, hooks, agent files and skills; say how to fix what fails',
  flags: { json: 'boolean', timeout: 'value' },
  async run(context) {
    const { io, args, appDir, workspaceRoot } = context;
    const timeoutFlag = args.flags.get('timeout');
    const timeoutMs = timeoutFlag === undefined ? DEFAULT_TIMEOUT_MS : Number(timeoutFlag);
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new LegionError(`--timeout must be a positive number of milliseconds, not "${String(timeoutFlag)}"`, 2);
    const env = io.env;
    const home = env.HOME || homedir();
    const checks: Check[] = [checkNode(process.version), checkKeys(env)];

    const trust = await workspaceTrustOf(context);
    const configFiles = defaultConfigFiles(appDir, workspaceRoot, home, trust);
    const loaded = await loadConfig(configFiles);
    const config = loaded.ok ? loaded.config : configSchema().parse({});
    if (!loaded.ok) checks.push({ name: 'config', ok: false, detail: `configuration: ${loaded.error}`, fix: 'correct the file and line named' });

    const selected = await createProviderRegistry({
      config, env, appDir, cwd: io.cwd,
      overrides: { ...(args.global.provider ? { provider: args.global.provider } : {}), ...(args.global.model ? { model: args.global.model } : {}) },
    });
    if (!selected.ok) {
      checks.push({ name: 'provider', ok: false, detail: 'no provider can be used', fix: selected.error });
    } else {
      const { registry } = selected;
      checks.push(await checkProvider(probeTarget(registry.providerId, env, config), registry.label, fetch, timeoutMs));
      if (registry.providerId === 'faux') {
        checks.push({ name: 'price', ok: true, detail: 'model: scripted replies (free, no context window)' });
      } else {
        const pricing = await loadPricing(defaultPricingFiles(appDir, workspaceRoot, home, trust));
        checks.push(...checkModel(registry.model, pricing.ok ? pricing.pricing : null, pricing.ok ? null : pricing.error));
      }
    }

    // Never a `bwrap` or `tmux` a sandboxed command planted in a folder of the workspace (an activated .venv/bin):
    // it would run as the user, and the check would vouch for a sandbox the start never uses.
    const runTool = toolRunner(hostPath(env.PATH ?? '', workspaceRoot));
    checks.push(checkTool('tmux', 'tmux', ['-V'], 'the end-to-end tests drive Legion in tmux', 'install tmux (apt-get install tmux, brew install tmux)', runTool));
    checks.push(process.platform === 'linux'
      ? checkTool('bwrap', 'bwrap', ['--version'], 'the shell sandbox', 'install bubblewrap (apt-get install bubblewrap)', runTool)
      : { name: 'bwrap', ok: true, detail: `bubblewrap: not used on ${process.platform}` });
    checks.push(checkMcp(mcpServerNames(config)));
    if (config.engine.kind === 'restate') checks.push(await checkEngine(config.engine, layoutFor(workspaceRoot).legionDir, trust));
    if (config.engine.kind === 'restate') checks.push(await checkEngineSandbox(config.engine, config.sandbox.network, layoutFor(workspaceRoot).legionDir, trust));
    const layout = layoutFor(workspaceRoot);
    checks.push(await checkWorkspaceFolder(layout));
    checks.push(checkWorkspaceTrustState(trust, layout.legionDir));
    checks.push(await checkLocks(layout, pidIsAlive));
    checks.push(...(await checkConventions({ appDir, workspaceRoot, env, home, config, configFiles, trust })));

    const ok = checks.every((c) => c.ok);
    if (args.flags.has('json')) io.stdout(JSON.stringify({ ok, checks }, null, 2) + '\n');
    else io.stdout(formatChecks(checks));
    return ok ? 0 : 1;
  },
};
