import { requestText } from './http-text';
import { messageOf } from '../errors';

/** An answer of the engine's admin API, or why there was none. */
export type AdminResult<T> = { ok: true; value: T } | { ok: false; error: string; status?: number };

/** One admin API request (node:http, connection kept alive: the hub polls every 250 ms). */
async function call<T>(admin: string, path: string, init: { method?: string; body?: string } = {}, timeoutMs = 5000): Promise<AdminResult<T>> {
  try {
    const { status, text } = await requestText(`${admin}${path}`, init, timeoutMs);
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
