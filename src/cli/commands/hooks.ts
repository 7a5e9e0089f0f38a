import { homedir } from 'node:os';
import { relative } from 'node:path';
import type { Command, CommandContext } from '../command';
import { LegionError } from '../../errors';
import { defaultConfigFiles } from '../../config/load';
import { userConfigDir } from '../../storage/private-mode';
import { defaultHookFiles, loadHooks, type HookEntry } from '../../conventions/hooks/load';
import { createHooksTrust, hooksTrustFile, type HooksTrust } from '../../conventions/hooks/trust';
import { realWorkspaceRoot, workspaceTrustOf } from '../workspace-root';

const USAGE = 'legion hooks list [--json] | trust | untrust';

/**
 * `legion hooks list` prints every hook of every layer with its event, matcher, command and
 * file, and whether the workspace's hooks are trusted; `trust` approves the workspace's hooks
 * as they are now (definitions and the scripts they run); `untrust` withdraws that
 * (docs/conventions.md#hooks-trust).
 */
export const hooksCommand: Command = {
  name: 'hooks',
  usage: USAGE,
  summary: 'Claude-Code-style hooks: list them, trust the workspace\'s',
  flags: { json: 'boolean' },
  async run(context) {
    const [sub, ...rest] = context.args.positionals;
    if (rest.length > 0) throw new LegionError(`usage: ${USAGE}`, 2);
    switch (sub) {
      case 'list':
        return list(context);
      case 'trust':
        return trust(context);
      case 'untrust':
        return untrust(context);
      default:
        throw new LegionError(sub ? `unknown hooks command "${sub}"; usage: ${USAGE}` : `usage: ${USAGE}`, 2);
    }
  },
};

export interface HooksState {
  readonly root: string;
  readonly hooks: HookEntry[];
  readonly warnings: string[];
  readonly trust: HooksTrust;
}

export async function loadHooksState(context: Pick<CommandContext, 'workspaceRoot' | 'appDir' | 'io'>): Promise<HooksState> {
  const root = await realWorkspaceRoot(context.workspaceRoot);
  const env = context.io.env;
  const home = env.HOME || homedir();
  const loaded = await loadHooks(defaultHookFiles(defaultConfigFiles(context.appDir, root, home, await workspaceTrustOf(context)), root));
  const trust = createHooksTrust({ file: hooksTrustFile(userConfigDir(env, home)), workspaceRoot: root, env });
  return { root, hooks: loaded.hooks, warnings: loaded.warnings, trust };
}

async function list(context: CommandContext): Promise<number> {
  const state = await loadHooksState(context);
  const { io } = context;
  for (const warning of state.warnings) io.stderr(`legion: warning: ${warning}\n`);
  const own = state.hooks.filter((h) => h.fromWorkspace);
  const check = own.length > 0 ? await state.trust.check(state.hooks) : null;
  if (context.args.flags.has('json')) {
    const out = {
      hooks: state.hooks.map((h) => ({ event: h.event, matcher: h.matcher ?? null, command: h.command, timeoutMs: h.timeoutMs, file: h.file, fromWorkspace: h.fromWorkspace })),
      workspaceTrusted: check === null ? null : check.trusted,
      ...(check && !check.trusted ? { reason: check.reason } : {}),
    };
    io.stdout(JSON.stringify(out, null, 2) + '\n');
    return 0;
  }
  if (state.hooks.length === 0) {
    io.stdout('no hooks (add them under hooks: in a config file, or in .claude/settings.json; see docs/conventions.md)\n');
    return 0;
  }
  for (const h of state.hooks) {
    const where = h.fromWorkspace ? relative(state.root, h.file) : h.file;
    io.stdout(`${h.event}${h.matcher ? ` [${h.matcher}]` : ''}  ${h.command}  (timeout ${h.timeoutMs / 1000} s; ${where})\n`);
  }
  if (check) {
    io.stdout(check.trusted
      ? `the workspace's ${own.length} hook(s) are trusted\n`
      : `the workspace's ${own.length} hook(s) do not run: ${check.reason}; run \`legion hooks trust\` once you have read them (and the scripts they run)\n`);
  }
  return 0;
}

async function trust(context: CommandContext): Promise<number> {
  const state = await loadHooksState(context);
  const own = state.hooks.filter((h) => h.fromWorkspace);
  if (own.length === 0) {
    context.io.stdout('this workspace defines no hooks\n');
    return 0;
  }
  await state.trust.trust(state.hooks);
  const files = [...new Set(own.map((h) => relative(state.root, h.file)))].join(', ');
  context.io.stdout(`trusted ${own.length} hook(s) of ${files} as they are now; a change to them or to a script they run asks again\n`);
  return 0;
}

async function untrust(context: CommandContext): Promise<number> {
  const state = await loadHooksState(context);
  context.io.stdout((await state.trust.revoke()) ? 'the workspace\'s hooks are no longer trusted\n' : 'the workspace\'s hooks were not trusted\n');
  return 0;
}
