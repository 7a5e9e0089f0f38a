import type { Command } from '../command';
import { LegionError } from '../../errors';
import { parseListen, startWorkerEndpoint } from '../../engine/worker';
import { registerDeployment } from '../../engine/admin';
import { engineSettings } from '../engine-settings';
import { createWorkerTurns } from '../compose-engine';
import { EventFeed } from '../../engine/event-feed';
import { workerSdkLogger } from '../../engine/sdk-log';

const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** `legion worker`: run Legion's turns for the engine (docs/engine.md#running-it). */
export const workerCommand: Command = {
  name: 'worker',
  usage: 'legion worker [--listen host:port] [--no-register] [--admin <url>]',
  summary: 'serve Legion\'s services to the Restate engine and register them (engine.kind: restate)',
  flags: { listen: 'value', 'no-register': 'boolean', admin: 'value' },
  async run(context) {
    const { args, io } = context;
    if (args.positionals.length > 0) throw new LegionError(`legion worker takes no arguments (got "${args.positionals[0]}")`, 2);
    const listenFlag = args.flags.get('listen');
    const listen = parseListen(typeof listenFlag === 'string' ? listenFlag : undefined);
    if ('error' in listen) throw new LegionError(listen.error, 2);
    // --admin: the engine to register with when the config does not name it (legion engine up passes it).
    const adminFlag = args.flags.get('admin');
    const engine = typeof adminFlag === 'string' ? { admin: adminFlag.replace(/\/+$/, '') } : await engineSettings(context);
    const stamp = (): string => new Date().toISOString().slice(0, 19).replace('T', ' ');
    const log = (line: string): void => io.stderr(`${stamp()} legion worker: ${line}\n`);
    const feed = new EventFeed();
    const turns = createWorkerTurns(context, feed);
    const endpoint = await startWorkerEndpoint({ ...listen, feed, runTurn: turns.runTurn, sdkLog: workerSdkLogger(io.env, io.stderr) }).catch((error: Error) => {
      throw new LegionError(`cannot listen on ${listen.host}:${listen.port}: ${error.message}`);
    });
    log(`serving Legion's services at ${endpoint.url}`);
    if (args.flags.get('no-register') !== true) {
      const registered = await registerDeployment(engine.admin, endpoint.url);
      if (!registered.ok) {
        await endpoint.close();
        throw new LegionError(`could not register ${endpoint.url} with the engine: ${registered.error} (is it running? legion engine up)`);
      }
      log(`registered with ${engine.admin} as deployment ${registered.value.id} (${registered.value.services.join(', ')})`);
    }
    io.stdout(`${endpoint.url}\n`);
    const reason = await new Promise<string>((resolve) => {
      for (const signal of STOP_SIGNALS) process.once(signal, () => resolve(signal));
    });
    log(`stopping (${reason}); turns in flight are retried by the engine on another worker`);
    await endpoint.close();
    await turns.closeKept();
    return 0;
  },
};
