import { isAbsolute, join, resolve as resolvePath, basename } from 'node:path';
import type { LegionConfig } from '../config/schema';
import type { Provider } from './types';
import { createAnthropicProvider } from './anthropic';
import { createOpenAIProvider, isOfficialOpenAI } from './openai';
import { createGeminiProvider } from './gemini';
import { createFauxProvider } from './faux';
import { loadFauxScript, type FauxScript } from './faux-script';
import { KEY_VARIABLE } from './failure';

/**
 * Provider and model selection (docs/design.md#providers).
 * Provider: `--provider` > `LEGION_PROVIDER` > config `provider` (default `auto`).
 * `auto`: ANTHROPIC_API_KEY → anthropic; else OPENAI_API_KEY → openai; else GEMINI_API_KEY →
 * gemini (docs/gemini.md); else OPENAI_BASE_URL (a local compatible server, no key needed) →
 * openai; else the labelled demo (faux with the
 * built-in script). Model: `--model` > `LEGION_MODEL` > config `model` > `providers.<id>.model`
 * > the built-in default of the provider. Agents with `provider`/`model` other than
 * 'default' override the run's; an agent on another provider than the run's with model
 * 'default' gets that provider's default model.
 */
export type ProviderId = 'anthropic' | 'openai' | 'gemini' | 'faux';
export const PROVIDER_IDS: readonly ProviderId[] = ['anthropic', 'openai', 'gemini', 'faux'];
export const DEFAULT_MODELS: Record<ProviderId, string> = { anthropic: 'claude-sonnet-5-5', openai: 'gpt-5.4', gemini: 'gemini-2.5-flash', faux: 'faux' };
type KeyedProvider = Exclude<ProviderId, 'faux'>;
/** Placeholder key for compatible servers that need none (the SDK requires some value). */
const NO_KEY = 'not-needed';

export type Env = Readonly<Record<string, string | undefined>>;

export interface RegistryOptions {
  readonly config: LegionConfig;
  readonly env: Env;
  /** Package root: the built-in demo script is `<appDir>/config/demo-script.yaml`. */
  readonly appDir: string;
  /** Base of a relative faux script path (default: the process's cwd). */
  readonly cwd?: string;
  /** `--provider` / `--model` of the command line. */
  readonly overrides?: { readonly provider?: string; readonly model?: string };
  /** For tests: the fetch the SDK clients use. */
  readonly fetch?: typeof fetch;
}

export interface ResolvedProvider {
  readonly providerId: ProviderId;
  readonly provider: Provider;
  readonly model: string;
  readonly maxTokens: number;
}

export type Result<T> = ({ ok: true } & T) | { ok: false; error: string };

export interface ProviderRegistry {
  /** The run's provider and model. */
  readonly providerId: ProviderId;
  readonly model: string;
  /** For the status bar: "anthropic · claude-sonnet-4-5", "openai · llama3.1 @ localhost:11434", "demo". */
  readonly label: string;
  /** True when running the built-in demo script because no key was found (or faux had no script). */
  readonly demo: boolean;
  /** A line to show once at start (the demo explanation), or null. */
  readonly notice: string | null;
  get(providerId: string): Result<{ provider: Provider }>;
  /** The provider and model for an agent (`provider`/`model` may be 'default' or absent). */
  resolve(agent: { readonly id?: string; readonly provider?: string; readonly model?: string }): Result<ResolvedProvider>;
}

export const DEMO_NOTICE =
  'demo mode: no API key found, so replies are scripted (no model is called). Set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY and restart to use real agents.';

export async function createProviderRegistry(options: RegistryOptions): Promise<Result<{ registry: ProviderRegistry }>> {
  const { config, env } = options;
  const nonEmpty = (name: string): string | undefined => (env[name] && env[name]!.trim() !== '' ? env[name]!.trim() : undefined);

  const [chosen, source] = options.overrides?.provider
    ? [options.overrides.provider, '--provider']
    : nonEmpty('LEGION_PROVIDER')
      ? [nonEmpty('LEGION_PROVIDER')!, 'LEGION_PROVIDER']
      : [config.provider, 'config provider'];
  if (chosen !== 'auto' && !isProviderId(chosen)) {
    return { ok: false, error: `unknown provider "${chosen}" (${source}): use auto, anthropic, openai, gemini or faux` };
  }
  const baseUrl = {
    anthropic: nonEmpty('ANTHROPIC_BASE_URL') ?? config.providers.anthropic.baseUrl,
    openai: nonEmpty('OPENAI_BASE_URL') ?? config.providers.openai.baseUrl,
    gemini: nonEmpty('GEMINI_BASE_URL') ?? config.providers.gemini.baseUrl,
  };
  const keyOf = (id: KeyedProvider): string | undefined =>
    nonEmpty(KEY_VARIABLE[id]) ?? (id === 'openai' && !isOfficialOpenAI(baseUrl.openai) ? NO_KEY : undefined);

  let runProvider: ProviderId;
  if (chosen === 'auto') {
    runProvider = nonEmpty('ANTHROPIC_API_KEY') ? 'anthropic' : nonEmpty('OPENAI_API_KEY') ? 'openai' : nonEmpty('GEMINI_API_KEY') ? 'gemini' : baseUrl.openai ? 'openai' : 'faux';
  } else runProvider = chosen;

  // The faux script: LEGION_FAUX_SCRIPT > providers.faux.script > the built-in demo.
  const scriptPath = nonEmpty('LEGION_FAUX_SCRIPT') ?? config.providers.faux.script;
  const demo = runProvider === 'faux' && !scriptPath;
  let script: FauxScript | null = null;
  const loadScript = async (): Promise<Result<{ script: FauxScript }>> => {
    if (script) return { ok: true, script };
    const file = scriptPath
      ? isAbsolute(scriptPath) ? scriptPath : resolvePath(options.cwd ?? process.cwd(), scriptPath)
      : join(options.appDir, 'config', 'demo-script.yaml');
    const loaded = await loadFauxScript(file);
    if (!loaded.ok) return loaded;
    script = loaded.script;
    return { ok: true, script };
  };
  // Loaded up front when the run uses it (a bad script stops the start) or when one is named
  // (an agent may use faux while the run does not; a bad script then only fails that agent).
  let scriptError: string | null = null;
  if (runProvider === 'faux' || scriptPath) {
    const loaded = await loadScript();
    if (!loaded.ok && runProvider === 'faux') return loaded;
    if (!loaded.ok) scriptError = loaded.error;
  }

  const missingKey = (id: KeyedProvider, why: string): string =>
    `provider ${id} (${why}) needs an API key: set ${KEY_VARIABLE[id]}${id === 'openai' ? ' (or OPENAI_BASE_URL for a local server)' : ''}`;
  if (runProvider !== 'faux' && !keyOf(runProvider)) return { ok: false, error: missingKey(runProvider, source) };

  const defaultModelOf = (id: ProviderId): string => (id === 'faux' ? DEFAULT_MODELS.faux : config.providers[id].model ?? DEFAULT_MODELS[id]);
  const runModel = options.overrides?.model ?? nonEmpty('LEGION_MODEL') ?? config.model ?? defaultModelOf(runProvider);
  const maxTokensOf = (id: ProviderId): number => (id === 'faux' ? config.providers.maxTokens : config.providers[id].maxTokens ?? config.providers.maxTokens);

  const cache = new Map<ProviderId, Provider>();
  const common = { maxRetries: config.providers.maxRetries, idleTimeoutMs: config.providers.idleTimeoutMs, fetch: options.fetch };
  const get = (id: string, why = `agent provider`): Result<{ provider: Provider }> => {
    if (!isProviderId(id)) return { ok: false, error: `unknown provider "${id}": use anthropic, openai, gemini, faux or default` };
    const cached = cache.get(id);
    if (cached) return { ok: true, provider: cached };
    let provider: Provider;
    if (id === 'faux') {
      if (!script) return { ok: false, error: scriptError ?? 'the faux provider has no script (set LEGION_FAUX_SCRIPT or providers.faux.script)' };
      provider = createFauxProvider({ script });
    } else {
      const apiKey = keyOf(id);
      if (!apiKey) return { ok: false, error: missingKey(id, why) };
      const baseURL = baseUrl[id];
      const create = id === 'anthropic' ? createAnthropicProvider : id === 'gemini' ? createGeminiProvider : createOpenAIProvider;
      provider = create({ apiKey, ...(baseURL ? { baseURL } : {}), ...common });
    }
    cache.set(id, provider);
    return { ok: true, provider };
  };

  const registry: ProviderRegistry = {
    providerId: runProvider,
    model: runModel,
    label: demo ? 'demo' : labelOf(runProvider, runModel, runProvider === 'faux' ? undefined : baseUrl[runProvider], scriptPath),
    demo,
    notice: demo ? DEMO_NOTICE : null,
    get: (id) => get(id),
    resolve(agent) {
      const wanted = !agent.provider || agent.provider === 'default' ? runProvider : agent.provider;
      const got = get(wanted, agent.id ? `used by agent ${agent.id}` : 'agent provider');
      if (!got.ok) return got;
      const providerId = wanted as ProviderId;
      const model = agent.model && agent.model !== 'default' ? agent.model : providerId === runProvider ? runModel : defaultModelOf(providerId);
      return { ok: true, providerId, provider: got.provider, model, maxTokens: maxTokensOf(providerId) };
    },
  };
  // Fail at start, not at the first turn, when the run's own provider cannot be built.
  const first = get(runProvider, source);
  if (!first.ok) return first;
  return { ok: true, registry };
}

function isProviderId(value: string): value is ProviderId {
  return (PROVIDER_IDS as readonly string[]).includes(value);
}

function labelOf(id: ProviderId, model: string, baseURL: string | undefined, scriptPath: string | undefined): string {
  if (id === 'faux') return `faux · ${scriptPath ? basename(scriptPath) : 'demo'}`;
  let host = '';
  if (baseURL) {
    try {
      const url = new URL(baseURL);
      if (!['api.openai.com', 'api.anthropic.com', 'generativelanguage.googleapis.com'].includes(url.hostname)) host = ` @ ${url.host}`;
    } catch {
      host = ` @ ${baseURL}`;
    }
  }
  return `${id} · ${model}${host}`;
}
