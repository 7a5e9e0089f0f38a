import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { configSchema } from '../../../src/config/schema';
import { createProviderRegistry, type Env } from '../../../src/providers/select';
import { loadPricing, defaultPricingFiles } from '../../../src/providers/pricing';
import { secretsFromEnv } from '../../../src/authz/redact';
import { TRUSTED } from '../../../src/storage/workspace-trust';

const APP_DIR = fileURLToPath(new URL('../../../', import.meta.url));

async function select(env: Env, over: Record<string, unknown> = {}) {
  return createProviderRegistry({ config: configSchema().parse(over), env, appDir: APP_DIR });
}

test('GEMINI_API_KEY alone selects gemini (default model gemini-2.5-flash); another key wins in auto; LEGION_PROVIDER=gemini forces it', async () => {
  const cases: Array<[Env, string, string]> = [
    [{ GEMINI_API_KEY: 'g' }, 'gemini', 'gemini · gemini-2.5-flash'],
    [{ GEMINI_API_KEY: 'g', OPENAI_BASE_URL: 'http://localhost:11434/v1' }, 'gemini', 'gemini · gemini-2.5-flash'],
    [{ GEMINI_API_KEY: 'g', ANTHROPIC_API_KEY: 'a' }, 'anthropic', 'anthropic · claude-sonnet-5-5'],
    [{ GEMINI_API_KEY: 'g', OPENAI_API_KEY: 'o' }, 'openai', 'openai · gpt-5.4'],
    [{ GEMINI_API_KEY: 'g', ANTHROPIC_API_KEY: 'a', LEGION_PROVIDER: 'gemini' }, 'gemini', 'gemini · gemini-2.5-flash'],
    [{ GEMINI_API_KEY: 'g', LEGION_MODEL: 'gemini-3-pro-preview', GEMINI_BASE_URL: 'http://127.0.0.1:9/v1beta/openai/' }, 'gemini', 'gemini · gemini-3-pro-preview @ 127.0.0.1:9'],
  ];
  for (const [env, id, label] of cases) {
    const r = await select(env);
    assert.ok(r.ok, JSON.stringify(env));
    assert.equal(r.registry.providerId, id, JSON.stringify(env));
    assert.equal(r.registry.label, label);
    const resolved = r.registry.resolve({});
    assert.ok(resolved.ok);
    assert.equal(resolved.provider.id, id);
  }
});

test('gemini without its key: one line naming GEMINI_API_KEY; config provider gemini and providers.gemini are valid', async () => {
  const r = await select({ LEGION_PROVIDER: 'gemini' });
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.error, 'provider gemini (LEGION_PROVIDER) needs an API key: set GEMINI_API_KEY');
  const configured = await select({ GEMINI_API_KEY: 'g' }, { provider: 'gemini', providers: { gemini: { model: 'gemini-2.5-pro', baseUrl: 'https://example.test/v1beta/openai/' } } });
  assert.ok(configured.ok);
  assert.equal(configured.registry.label, 'gemini · gemini-2.5-pro @ example.test');
});

test('the Gemini key is a secret: scrubbed like the other keys', () => {
  assert.ok(secretsFromEnv({ GEMINI_API_KEY: 'AIzaSyTestGeminiKey123456' }).includes('AIzaSyTestGeminiKey123456'));
});

test('config/models.yaml prices the Gemini models and knows their context windows', async () => {
  const loaded = await loadPricing(defaultPricingFiles(APP_DIR, '/nonexistent', '/nonexistent', TRUSTED));
  assert.ok(loaded.ok);
  for (const model of ['gemini-3-pro-preview', 'gemini-3-flash-preview', 'gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite', 'gemini-2.0-flash']) {
    const price = loaded.pricing.priceOf(model);
    assert.ok(price && price.input > 0 && price.output > 0, model);
    assert.equal(price.contextWindow, 1_048_576, model);
  }
  // 2.5 Pro's long-prompt tier: over 200k prompt tokens, every token at the higher rate.
  assert.equal(loaded.pricing.costOf('gemini-2.5-pro', { inputTokens: 300_000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }), 0.75);
});
