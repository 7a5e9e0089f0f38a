import { hostname, homedir } from 'node:os';
import { LegionError, messageOf } from '../errors';
import type { CommandContext } from './command';
import { defaultConfigFiles, loadConfig } from '../config/load';
import { workspaceTrustOf } from './workspace-root';
import { layoutFor } from '../storage/layout';
import type { ScreenSession } from '../runtime/core-api';
import { locateServer } from '../serve/locate';
import { checkServerSocket, type ServerInfo } from '../serve/discovery';
import type { RemoteSession } from '../serve/remote-core';

/** `--attach` requires a server, `--no-attach` ignores one, neither: attach when one runs (docs/serve.md#attaching). */
export type AttachChoice = 'auto' | 'require' | 'never';

export function attachChoice(context: CommandContext): AttachChoice {
  const yes = context.args.flags.get('attach') === true;
  const no = context.args.flags.get('no-attach') === true;
  if (yes && no) throw new LegionError('use either --attach or --no-attach, not both', 2);
  return yes ? 'require' : no ? 'never' : 'auto';
}

/**
 * The workspace's server to attach to, or null to run the core in-process. A stale
 * serve.json (its server killed) is cleaned up on the way (said on stderr). With --run or
 * --new naming another run than the server's, attaching is refused with what to do instead.
 */
export async function serverToAttach(context: CommandContext, choice: AttachChoice): Promise<ServerInfo | null> {
  if (choice === 'never') return null;
  const located = await locateServer(layoutFor(context.workspaceRoot).legionDir, { hostname: hostname() });
  if (located.kind === 'none') {
    if (located.recovered) context.io.stderr(`legion: ${located.recovered}\n`);
    if (choice === 'require') throw new LegionError('no Legion server runs for this workspace: start one with `legion serve --detach`');
    return null;
  }
  if (located.kind === 'refused') throw new LegionError(located.error);
  const { info } = located;
  if (info.hostname !== hostname()) {
    throw new LegionError(`the Legion server of this workspace runs on host ${info.hostname}: attach there (ssh), or use --no-attach with --new`);
  }
  const runFlag = context.args.flags.get('run');
  if (context.args.flags.get('new') === true || (typeof runFlag === 'string' && runFlag !== info.runId)) {
    throw new LegionError(`the Legion server of this workspace serves run ${info.runId}: attach to it without --run/--new, or add --no-attach to drive another run here`, 2);
  }
  return info;
}

/**
 * The server's core and the services beside it (serve/remote-core.ts). `persist`: a lost
 * connection or a stopped server is waited for until the front end detaches (the TUI:
 * docs/serve.md#when-the-server-goes-away), the socket checked again before each try (its
 * workspace's `legionDir`); else a dropped link is tried for about 3 s.
 */
export async function attachServer(info: ServerInfo, client: string, persist: { readonly legionDir: string } | null = null): Promise<RemoteSession> {
  try {
    // Loaded only when a server runs: the socket client, its protocol and schemas cost a local start nothing.
    const [{ attachRemote }, { BRIEF, UNTIL_DETACHED }] = await Promise.all([import('../serve/remote-core'), import('../serve/reconnect-policy')]);
    const uid = process.getuid?.() ?? 0;
    // Each try checks the socket again as locate did before the first (checkServerSocket).
    const checkSocket = (): string | null => (persist ? checkServerSocket(info.socket, persist.legionDir, uid) : null);
    return await attachRemote({ socket: info.socket, client, reconnect: persist ? UNTIL_DETACHED : BRIEF, checkSocket });
  } catch (error) {
    throw new LegionError(`could not attach to the Legion server (pid ${info.pid}, ${info.socket}): ${messageOf(error)}`);
  }
}

/** What the full-screen UI needs, over a remote core: the UI settings come from this machine's config files. */
export async function attachedScreenSession(context: CommandContext, info: ServerInfo): Promise<ScreenSession> {
  const env = context.io.env;
  // The UI settings of this machine's config: the project's only in a trusted workspace (docs/workspace-trust.md).
  const loaded = await loadConfig(defaultConfigFiles(context.appDir, context.workspaceRoot, env.HOME || homedir(), await workspaceTrustOf(context)));
  if (!loaded.ok) throw new LegionError(loaded.error);
  const { core, history, workflows } = await attachServer(info, 'tui', { legionDir: layoutFor(context.workspaceRoot).legionDir });
  const { welcome } = core;
  return {
    core, history, workflows, config: loaded.config, providerLabel: welcome.providerLabel ?? 'server', demo: welcome.demo ?? false, runId: core.runId, resumed: true,
    // The server's trust decides what its agents may do: its warning, not this process's check (a trust given or revoked since its start applies at its restart).
    warnings: [...(welcome.untrusted ? [welcome.untrusted] : []), ...loaded.warnings, `attached to the Legion server (pid ${info.pid}): quitting leaves its agents working; \`legion stop\` ends it`],
    attached: true,
    // Checkpoints and undo stay with the server (docs/serve.md#attaching): `legion undo` works beside it.
    close: () => core.shutdown('detach'),
    // The server started its background work (sandbox probe, checkpoints, MCP) when it began serving.
    startBackground: () => undefined,
  };
}
