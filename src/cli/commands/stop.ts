import { setTimeout as delay } from 'node:timers/promises';
import { hostname } from 'node:os';
import type { Command } from '../command';
import { LegionError } from '../../errors';
import { layoutFor } from '../../storage/layout';
import { locateServer } from '../../serve/locate';
import { pidIsAlive } from '../../storage/lock-file';
import { existsSync } from 'node:fs';
import { serveInfoFile } from '../../serve/discovery';

/** `legion stop`: end the workspace's server gracefully (docs/serve.md). */
export const stopCommand: Command = {
  name: 'stop',
  usage: 'legion stop',
  summary: 'stop the workspace\'s server (running turns are interrupted, histories stay valid)',
  flags: {},
  async run(context) {
    const { io, args } = context;
    if (args.positionals.length > 0) throw new LegionError(`legion stop takes no arguments (got "${args.positionals[0]}")`, 2);
    const layout = layoutFor(context.workspaceRoot);
    const located = await locateServer(layout.legionDir, { hostname: hostname() });
    if (located.kind === 'none') {
      if (located.recovered) io.stderr(`legion: ${located.recovered}\n`);
      throw new LegionError('no Legion server runs for this workspace');
    }
    if (located.kind === 'refused') throw new LegionError(located.error);
    const { info } = located;
    if (info.hostname !== hostname()) throw new LegionError(`the server runs on host ${info.hostname} (pid ${info.pid}): stop it there`);
    try {
      process.kill(info.pid, 'SIGTERM');
    } catch (error) {
      throw new LegionError(`could not signal pid ${info.pid}: ${(error as Error).message}`);
    }
    // The server interrupts running turns (at most a few seconds), flushes and exits.
    const deadline = Date.now() + 30_000;
    while (pidIsAlive(info.pid) && existsSync(serveInfoFile(layout.legionDir))) {
      if (Date.now() > deadline) throw new LegionError(`the server (pid ${info.pid}) is still stopping after 30 s`);
      await delay(50);
    }
    io.stdout(`legion: stopped the server (pid ${info.pid}, run ${info.runId})\n`);
    return 0;
  },
};
