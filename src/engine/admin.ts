import type * as Http from 'node:http';
import type * as Https from 'node:https';
import { createRequire } from 'node:module';
import { messageOf } from '../errors';

/**
 * node:http and node:https (with TLS), loaded by the first request: a start evaluates this
 * module (src/cli/engine-settings.ts) and draws its first frame without one
 * (docs/performance.md#start-up; scripts/start-path.mjs checks).
 */
let modules: { readonly http: typeof Http; readonly https: typeof Https } | undefined;
function httpModules(): { readonly http: typeof Http; readonly https: typeof Https } {
  if (!modules) {
    const load = createRequire(import.meta.url);
    modules = { http: load('node:http') as typeof Http, https: load('node:https') as typeof Https };
  }
  return modules;
}

/** An answer of the engine's admin API, or why there was none. */
export type AdminResult<T> = { ok: true; value: T } | { ok: false; error: string; status?: number };

/**
 * One request over node:http (its global agent keeps the connection alive): a hub asks for the
 * deployments every 250 ms, and `fetch` costs it several times the CPU of the request itself.
 */
function send(url: string, init: { method?: string; body?: string }, timeoutMs: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json' };
    if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
    const { http, https } = httpModules();
    const request = (url.startsWith('https:') ? https.request : http.request)(url, {
      method: init.method ?? 'GET', headers, signal: AbortSignal.timeout(timeoutMs),
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

async function call<T>(admin: string, path: string, init: { method?: string; body?: string } = {}, timeoutMs = 5000): Promise<AdminResult<T>> {
  try {
    const { status, text } = await send(`${admin}${path}`, init, timeoutMs);
    if (status < 200 || status >= 300) return { ok: false, status, error: `${admin}${path}: HTTP ${status} ${firstLine(text)}` };
    return { ok: true, value: (text ? JSON.parse(text) : undefined) as T };
  } catch (error) {
    return { ok: false, error: `${admin}${path}: ${messageOf(error)}` };
  }
}

const firstLine = (text: string): string => text.split('\n')[0]!.slice(0, 300);

/** The admin API answers (`GET /health`). */
export const adminHealth = (admin: string): Promise<AdminResult<unknown>> => call(admin, '/health');

interface Deployment {
  readonly id: string;
  readonly uri?: string;
  readonly services?: readonly { readonly name: string }[];
}

/**
 * Register a worker's endpoint (docs/engine.md#upgrades-and-versions). Idempotent: the engine
 * accepts the same endpoint with the same services again. A changed endpoint at the same URL
 * is refused by the engine (a conflict) unless `force`, which the operator passes knowingly.
 */
export async function registerDeployment(admin: string, uri: string, force = false): Promise<AdminResult<{ id: string; services: string[] }>> {
  const got = await call<Deployment>(admin, '/deployments', { method: 'POST', body: JSON.stringify({ uri, force }) }, 30_000);
  if (!got.ok) return got;
  return { ok: true, value: { id: got.value.id, services: (got.value.services ?? []).map((s) => s.name) } };
}

/** The registered deployments (`GET /deployments`). */
export async function listDeployments(admin: string): Promise<AdminResult<{ id: string; uri: string; services: string[] }[]>> {
  const got = await call<{ deployments: Deployment[] }>(admin, '/deployments');
  if (!got.ok) return got;
  return { ok: true, value: got.value.deployments.map((d) => ({ id: d.id, uri: d.uri ?? '', services: (d.services ?? []).map((s) => s.name) })) };
}
