import { httpModules } from '../providers/http-modules';

/**
 * One JSON request to the engine over node:http(s), its text answer. The global agent keeps the
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
    const request = (url.startsWith('https:') ? https.request : http.request)(url, {
      method: init.method ?? 'GET', headers, ...(timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(timeoutMs) }),
    }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (d: string) => { text += d; });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(init.body);
  });
}
