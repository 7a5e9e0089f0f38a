import { hostname } from 'node:os';
import { LegionError, messageOf } from '../errors';
import type { CommandContext } from './command';
import { composeApp } from './compose';
import { layoutFor } from '../storage/layout';
import { claimServerInfo, prepareSocketDir, releaseServerInfo, socketPathFor } from '../serve/discovery';
import { locateServer } from '../serve/locate';
import { startServer, type LegionServer, type ServerLimits } from '../serve/server';
import type { ServeAddon } from '../serve/addon';
import { VERSION } from './version';
import { untrustedNotice, type WorkspaceTrust } from '../storage/workspace-trust';

export interface ServeHostOptions {
  /** Resolves with the reason to stop (a signal, `legion stop`). */
  readonly until: Promise<string>;
  readonly addons: readonly ServeAddon[];
  readonly log: (line: string) => void;
  /** Told once the socket listens (tests, `--detach`'s parent learns it from serve.json). */
  readonly onReady?: (server: LegionServer) => void;
  readonly limits?: Partial<ServerLimits>;
}

/** "a Legion server already runs…" for a second `legion serve`. */
export async function refuseSecondServer(legionDir: string): Promise<string | undefined> {
  const located = await locateServer(legionDir, { hostname: hostname() });
  if (located.kind === 'running') {
    const { info } = located;
    throw new LegionError(
      `a Legion server already runs for this workspace (pid ${info.pid}${info.hostname !== hostname() ? ` on host ${info.hostname}` : ''}, run ${info.runId}, socket ${info.socket}): attach with \`legion\`, stop it with \`legion stop\``,
    );
  }
  if (located.kind === 'refused') throw new LegionError(located.error);
  return located.recovered;
}

/**
 * `legion serve` in the foreground: compose the run (taking its lock), claim `.legion/serve.json`
 * (the one-server-per-workspace lock), listen, start the addons; when `until` resolves, stop the
 * addons, say bye to the clients, shut the core down (turns interrupted with valid histories,
 * files flushed, lock released) and remove serve.json and the socket.
 */
export async function hostServer(context: CommandContext, options: ServeHostOptions): Promise<number> {
  const layout = layoutFor(context.workspaceRoot);
  const recovered = await refuseSecondServer(layout.legionDir);
  if (recovered) options.log(recovered);
  const runFlag = context.args.flags.get('run');
  const newRun = context.args.flags.get('new') === true;
  if (runFlag !== undefined && newRun) throw new LegionError('use either --run <id> or --new, not both', 2);
  const app = await composeApp(context, { ...(typeof runFlag === 'string' ? { runId: runFlag } : {}), newRun, log: options.log });
  const uid = process.getuid?.() ?? 0;
  const appLayout = layout;
  const socketPath = socketPathFor(appLayout.legionDir, context.io.env, uid);
  const info = { pid: process.pid, hostname: hostname(), socket: socketPath, runId: app.runId, startedAt: new Date().toISOString(), version: VERSION };
  let claimed = false;
  let server: LegionServer | undefined;
  const closers: { name: string; close: () => Promise<void> }[] = [];
  try {
    if (!claimServerInfo(appLayout.legionDir, info)) {
      throw new LegionError('another Legion server started for this workspace at the same moment: attach with `legion`');
    }
    claimed = true;
    const dirProblem = prepareSocketDir(socketPath, appLayout.legionDir, uid);
    if (dirProblem) throw new LegionError(dirProblem);
    server = await startServer({ core: app.core, history: app.history, workflows: app.workflows, socketPath, workspace: context.workspaceRoot, version: VERSION, log: options.log, providerLabel: app.providerLabel, demo: app.demo, ...untrustedOf(app.trust), ...(options.limits ? { limits: options.limits } : {}) });
    for (const warning of app.warnings) options.log(`warning: ${warning}`);
    app.startBackground();
    for (const addon of options.addons) {
      const close = await addon.start({
        core: app.core, config: app.config, workspaceRoot: context.workspaceRoot, legionDir: appLayout.legionDir, workspaceTrusted: app.trust.trusted,
        flags: context.args.flags, env: context.io.env, log: (l) => options.log(`${addon.name}: ${l}`),
      });
      if (close) closers.push({ name: addon.name, close });
    }
    options.log(`serving run ${app.runId} of ${context.workspaceRoot} (pid ${process.pid}); stop with \`legion stop\``);
    options.onReady?.(server);
    const reason = await options.until;
    options.log(`stopping: ${reason}`);
    return 0;
  } finally {
    for (const { name, close } of closers.reverse()) {
      await close().catch((error: unknown) => options.log(`${name}: could not stop: ${messageOf(error)}`));
    }
    await server?.close('the Legion server is stopping');
    await app.close('legion stop');
    if (claimed) releaseServerInfo(appLayout.legionDir, process.pid, socketPath);
    options.log('stopped');
  }
}

/** The untrusted-workspace warning for the welcome, when the workspace is not trusted (docs/workspace-trust.md). */
function untrustedOf(trust: WorkspaceTrust): { untrusted?: string } {
  const notice = untrustedNotice(trust);
  return notice === null ? {} : { untrusted: notice };
}
