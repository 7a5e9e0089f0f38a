import { z } from 'zod';
import { requestText } from './http-text';
import { messageOf } from '../errors';

/** An answer of the engine's admin API, or why there was none. */
export type AdminResult<T> = { ok: true; value: T } | { ok: false; error: string; status?: number };

/**
 * One admin API request (node:http, connection kept alive: the hub polls every 250 ms). The body
 * is checked against `schema` (the engine is a trust boundary): a malformed answer is an error
 * value `<url>: unexpected answer (…)` or `<url>: not JSON (…)`, never a throw.
 */
async function call<T>(admin: string, path: string, schema: z.ZodType<T>, init: { method?: string; body?: string } = {}, timeoutMs = 5000): Promise<AdminResult<T>> {
  const where = `${admin}${path}`;
  let text: string;
  try {
    const answer = await requestText(where, init, timeoutMs);
    if (answer.status < 200 || answer.status >= 300) return { ok: false, status: answer.status, error: `${where}: HTTP ${answer.status} ${firstLine(answer.text)}` };
    text = answer.text;
  } catch (error) {
    return { ok: false, error: `${where}: ${messageOf(error)}` };
  }
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch (error) {
    return { ok: false, error: `${where}: not JSON (${messageOf(error)}): ${firstLine(text)}` };
  }
  const checked = schema.safeParse(body);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const at = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    return { ok: false, error: `${where}: unexpected answer (${at}${issue?.message ?? 'malformed'}): ${firstLine(text)}` };
  }
  return { ok: true, value: checked.data };
}

const firstLine = (text: string): string => text.split('\n')[0]!.slice(0, 300);

/** The admin API answers (`GET /health`). */
export const adminHealth = (admin: string): Promise<AdminResult<unknown>> => call(admin, '/health', z.unknown());

/** A deployment as the admin API describes it (only what Legion reads; other fields pass unread). */
const Deployment = z.object({
  id: z.string(),
  uri: z.string().optional(),
  services: z.array(z.object({ name: z.string() })).optional(),
});
const Deployments = z.object({ deployments: z.array(Deployment) });

/**
 * Register a worker's endpoint (docs/engine.md#upgrades-and-versions). Idempotent: the engine
 * accepts the same endpoint with the same services again. A changed endpoint at the same URL
 * is refused by the engine (a conflict) unless `force`, which the operator passes knowingly.
 */
export async function registerDeployment(admin: string, uri: string, force = false): Promise<AdminResult<{ id: string; services: string[] }>> {
  const got = await call(admin, '/deployments', Deployment, { method: 'POST', body: JSON.stringify({ uri, force }) }, 30_000);
  if (!got.ok) return got;
  return { ok: true, value: { id: got.value.id, services: (got.value.services ?? []).map((s) => s.name) } };
}

/** The registered deployments (`GET /deployments`). */
export async function listDeployments(admin: string): Promise<AdminResult<{ id: string; uri: string; services: string[] }[]>> {
  const got = await call(admin, '/deployments', Deployments);
  if (!got.ok) return got;
  return { ok: true, value: got.value.deployments.map((d) => ({ id: d.id, uri: d.uri ?? '', services: (d.services ?? []).map((s) => s.name) })) };
}
