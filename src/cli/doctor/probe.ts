import type { LegionConfig } from '../../config/schema';
import type { ProviderId } from '../../providers/select';
import { KEY_VARIABLE } from '../../providers/failure';
import { GEMINI_DEFAULT_BASE_URL } from '../../providers/gemini';
import { OPENAI_DEFAULT_BASE_URL } from '../../providers/openai';

/** Where `legion doctor` asks whether the chosen provider answers. */
export interface ProbeTarget {
  readonly provider: Exclude<ProviderId, 'faux'>;
  /** The model list endpoint: the cheapest authenticated request each API offers (no tokens billed). */
  readonly url: string;
  readonly headers: Record<string, string>;
}

export type ProbeResult = { ok: true; detail: string } | { ok: false; detail: string; fix: string };

const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';

/** The probe for the run's provider, with the same base URL and key the run would use; null for faux. */
export function probeTarget(provider: ProviderId, env: Readonly<Record<string, string | undefined>>, config: LegionConfig): ProbeTarget | null {
  const value = (name: string): string | undefined => (env[name]?.trim() ? env[name]!.trim() : undefined);
  const join = (base: string, path: string): string => `${base.replace(/\/+$/, '')}/${path}`;
  switch (provider) {
    case 'faux':
      return null;
    case 'anthropic': {
      const base = value('ANTHROPIC_BASE_URL') ?? config.providers.anthropic.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL;
      return { provider, url: join(base, 'v1/models?limit=1'), headers: { 'x-api-key': value(KEY_VARIABLE.anthropic) ?? '', 'anthropic-version': '2023-06-01' } };
    }
    case 'openai': {
      const base = value('OPENAI_BASE_URL') ?? config.providers.openai.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
      const key = value(KEY_VARIABLE.openai);
      return { provider, url: join(base, 'models'), headers: key ? { authorization: `Bearer ${key}` } : {} };
    }
    case 'gemini': {
      const base = value('GEMINI_BASE_URL') ?? config.providers.gemini.baseUrl ?? GEMINI_DEFAULT_BASE_URL;
      return { provider, url: join(base, 'models'), headers: { authorization: `Bearer ${value(KEY_VARIABLE.gemini) ?? ''}` } };
    }
  }
}

/**
 * One GET with a short timeout. 2xx: answers. 401/403: the key is refused. Another status:
 * the server answers but not as expected (a compatible server without a model list still
 * counts as answering, since chat may work). No answer in time, or no connection: fails.
 */
export async function probeProvider(target: ProbeTarget, fetcher: typeof fetch, timeoutMs: number): Promise<ProbeResult> {
  const host = safeHost(target.url);
  let response: Response;
  try {
    response = await fetcher(target.url, { method: 'GET', headers: target.headers, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      return { ok: false, detail: `no answer from ${host} within ${timeoutMs / 1000} s`, fix: 'check your network or proxy, or the base URL variable' };
    }
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { ok: false, detail: `cannot reach ${host} (${cause?.code ?? cause?.message ?? (error as Error).message})`, fix: 'check your network, or the base URL variable' };
  }
  await response.body?.cancel().catch(() => undefined);
  if (response.ok) return { ok: true, detail: `HTTP ${response.status} from ${host}` };
  if (response.status === 401 || response.status === 403) {
    return { ok: false, detail: `${host} refused the key (HTTP ${response.status})`, fix: `check ${KEY_VARIABLE[target.provider]}` };
  }
  if (response.status >= 500) return { ok: false, detail: `${host} failed (HTTP ${response.status})`, fix: 'the service has a problem: try again later' };
  return { ok: true, detail: `HTTP ${response.status} from ${host}; it answers, though not with a model list` };
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
