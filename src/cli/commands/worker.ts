import type { Command } from '../command';
import { LegionError } from '../../errors';
import { parseListen, startWorkerEndpoint } from '../../engine/worker';
import { registerDeployment } from '../../engine/admin';
import { engineSettings } from '../engine-settings';
import { createWorkerTurns } from '../compose-engine';
import { EventFeed } from '../../engine/event-feed';
import { workerSdkLogger } from '../../engine/sdk-log';
import { IDENTITY_KEY_PATTERN } from '../../engine/identity';
import { workspaceFeedToken } from '../../engine/feed-token';
import { layoutFor } from '../../storage/layout';

const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

export const NO_IDENTITY_KEY = 'legion worker: no request identity key for the engine, so anyone reaching the worker could run turns: set engine.identityKey to the engine\'s public key (publickeyv1_…; restate-server logs it at start when worker.invoker.request-identity-private-key-pem-file is set), or restart the local engine (legion engine down, legion engine up)';

/** `legion worker`: run Legion's turns for the engine (docs/engine.md#running-it). */
export const workerCommand: Command = {
  name: 'worker',
  usage: 'legion worker [--listen host:port] [--no-register] [--admin <url> --identity-key <publickeyv1_…>]',
  summary: 'serve Legion\'s services to the Restate engine and register them (engine.kind: restate)',
  flags: { listen: 'value', 'no-register': 'boolean', admin: 'value', 'identity-key': 'value' },
  async run(context) {
    const { args, io } = context;
    if (args.positionals.length > 0) throw new LegionError(`legion worker takes no arguments (got "${args.positionals[0]}")`, 2);
    const listenFlag = args.flags.get('listen');
    const listen = parseListen(typeof listenFlag === 'string' ? listenFlag : undefined);
    if ('error' in listen) throw new LegionError(listen.error, 2);
    // --admin and --identity-key: the engine to register with and its public key, when the config
    // does not name them (legion engine up passes both).
    const adminFlag = args.flags.get('admin');
    const keyFlag = args.flags.get('identity-key');
    if ((typeof adminFlag === 'string') !== (typeof keyFlag === 'string')) throw new LegionError('legion worker: --admin and --identity-key go together (the engine and the key it signs with)', 2);
    const engine = typeof adminFlag === 'string' && typeof keyFlag === 'string'
      ? { admin: adminFlag.replace(/\/+$/, ''), identityKeys: [keyFlag] }
      : await engineSettings(context);
    // Fail-closed (docs/engine.md#who-may-talk-to-what): without the engine's key anyone who
    // reaches the port could invoke a turn with a journal of their own (an approval given).
    if (engine.identityKeys.length === 0) throw new LegionError(NO_IDENTITY_KEY);
    const badKey = engine.identityKeys.find((key) => !IDENTITY_KEY_PATTERN.test(key));
    if (badKey !== undefined) throw new LegionError(`legion worker: --identity-key ${badKey}: not a request identity public key (publickeyv1_… as restate-server logs it)`, 2);
    const stamp = (): string => new Date().toISOString().slice(0, 19).replace('T', ' ');
    const log = (line: string): void => io.stderr(`${stamp()} legion worker: ${line}\n`);
    const feed = new EventFeed();
    const turns = createWorkerTurns(context, feed);
    const token = workspaceFeedToken(layoutFor(context.workspaceRoot).legionDir);
    if (!token.ok) throw new LegionError(token.error);
    const feedToken = token.token;
    const endpoint = await startWorkerEndpoint({ ...listen, feed, identityKeys: engine.identityKeys, feedToken, runTurn: turns.runTurn, sdkLog: workerSdkLogger(io.env, io.stderr) }).catch((error: Error) => {
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
