import { LegionError } from '../../errors';
import type { ServeAddon } from '../../serve/addon';
import { DEFAULT_WEB_PORT, isLoopback, parseListen } from './listen';

/**
 * `legion serve --web [host:]port [--web-new-token]` (docs/remote.md#the-web-page): the web
 * page next to the socket. The server and its page are imported only when `--web` is given.
 * The URL with the token is logged once (stderr, or `.legion/logs/serve.log`, mode 0600).
 */
export const webAddon: ServeAddon = {
  name: 'web',
  flags: { web: 'value', 'web-new-token': 'boolean' },
  async start(context) {
    const spec = context.flags.get('web');
    if (spec === undefined) {
      if (context.flags.get('web-new-token') === true) throw new LegionError('--web-new-token needs --web [host:]port', 2);
      return null;
    }
    const parsed = parseListen(spec === true ? String(DEFAULT_WEB_PORT) : spec);
    if (!parsed.ok) throw new LegionError(parsed.error, 2);
    const [{ startWeb }, { loadOrCreateWebToken }] = await Promise.all([import('./server'), import('./token')]);
    // A token committed in an untrusted `.legion/web-token` is known to its author: a new one is made (docs/workspace-trust.md).
    const { token } = await loadOrCreateWebToken(context.legionDir, { rotate: context.flags.get('web-new-token') === true || !context.workspaceTrusted });
    let web;
    try {
      web = await startWeb({ core: context.core, token, host: parsed.address.host, port: parsed.address.port });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new LegionError(`--web: cannot listen on ${spec}: ${code === 'EADDRINUSE' ? 'the port is in use' : (error as Error).message}`);
    }
    context.log(`web page: ${web.url}`);
    if (!isLoopback(parsed.address.host)) {
      context.log(`warning: the web page listens on ${parsed.address.host}, beyond this machine: the token is its only guard and plain HTTP carries it in clear; put TLS in front (docs/remote.md#the-web-page)`);
    }
    return () => web.close();
  },
};
