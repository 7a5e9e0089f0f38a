import type { IncomingMessage } from 'node:http';
import { httpModules } from '../providers/http-modules';

/**
 * The scheme of an engine reached over a unix socket (docs/engine.md#who-may-talk-to-what):
 * `http+unix://<the socket's path, percent-encoded>/<path>`. The local engine of `legion engine
 * up` listens on unix sockets only, in its 0700 folder, so no other user of the machine reaches it.
 */
export const UNIX_SCHEME = 'http+unix://';

/** The base URL of an HTTP server on the unix socket at `socketPath`. */
export const unixSocketUrl = (socketPath: string): string => `${UNIX_SCHEME}${encodeURIComponent(socketPath)}`;

/** A URL of the engine as node:http takes it: a unix socket and a path, or the URL itself. */
export function httpTarget(url: string): { socketPath: string; path: string } | { url: string } {
  if (!url.startsWith(UNIX_SCHEME)) return { url };
  const rest = url.slice(UNIX_SCHEME.length);
  const slash = rest.indexOf('/');
  return { socketPath: decodeURIComponent(slash === -1 ? rest : rest.slice(0, slash)), path: slash === -1 ? '/' : rest.slice(slash) };
}

/**
 * One JSON request to the engine over node:http(s) (a unix socket for an `http+unix://` URL), its text answer. The global agent keeps the
 * connection alive: a hub asks the admin API for deployments every 250 ms, and `fetch` costs
 * several times the CPU of the request itself. `timeoutMs` bounds the whole request; without
 * it there is no deadline (a turn through the ingress may run for an hour, and fetch would give
 * up on the headers after 5 minutes). Rejects with what node:http says (refused, reset, timeout).
 */
export function requestText(
  url: string,
  init: { readonly method?: string; readonly body?: string; readonly headers?: Readonly<Record<string, string>> },
  timeoutMs?: number,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json', ...init.headers };
    if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
    const { http, https } = httpModules();
    const options = { method: init.method ?? 'GET', headers, ...(timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(timeoutMs) }) };
    const target = httpTarget(url);
    const onResponse = (response: IncomingMessage): void => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (d: string) => { text += d; });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', reject);
    };
    const request = 'socketPath' in target
      ? http.request({ ...options, socketPath: target.socketPath, path: target.path }, onResponse)
      : (url.startsWith('https:') ? https.request : http.request)(url, options, onResponse);
    request.on('error', reject);
    request.end(init.body);
  });
}
