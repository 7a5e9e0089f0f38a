import '../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startVendorServer, sse, fixture, type VendorServer } from '../../helpers/vendor-server';
import { collect, request } from '../../helpers/provider-run';
import { configSchema } from '../../../src/config/schema';
import { createProviderRegistry, type Env } from '../../../src/providers/select';

/** Selection → real SDK → base URL from the environment: both providers reach a local server. */
const APP_DIR = fileURLToPath(new URL('../../../', import.meta.url));
let server: VendorServer;
before(async () => {
  server = await startVendorServer();
});
after(() => server.close());

async function resolved(env: Env) {
  const r = await createProviderRegistry({ config: configSchema().parse({}), env, appDir: APP_DIR });
  if (!r.ok) throw new Error(r.error);
  const agent = r.registry.resolve({ id: 'ur-agent', provider: 'default', model: 'default' });
  if (!agent.ok) throw new Error(agent.error);
  return { registry: r.registry, agent };
}

test('ANTHROPIC_API_KEY + ANTHROPIC_BASE_URL: the anthropic SDK talks to that server', async () => {
  server.enqueue(sse(fixture('anthropic/text-stream.sse')));
  const { agent } = await resolved({ ANTHROPIC_API_KEY: 'sk-env', ANTHROPIC_BASE_URL: server.anthropicURL, LEGION_MODEL: 'claude-haiku-4-5' });
  const r = await collect(agent.provider, request({ model: agent.model, maxTokens: agent.maxTokens }));
  assert.equal(r.text, 'Hello!');
  const seen = server.requests.at(-1)!;
  assert.equal(seen.path, '/v1/messages');
  assert.equal(seen.headers.authorization, 'Bearer sk-env');
  assert.equal(seen.body.model, 'claude-haiku-4-5');
  assert.equal(seen.body.max_tokens, 8192);
});

test('OPENAI_BASE_URL without a key: a compatible server (Ollama, llama.cpp, vLLM) is used', async () => {
  server.enqueue(sse(fixture('openai/text-stream.sse')));
  const { registry, agent } = await resolved({ OPENAI_BASE_URL: server.openaiURL, LEGION_MODEL: 'qwen2.5-coder:7b' });
  assert.equal(registry.providerId, 'openai');
  assert.match(registry.label, /^openai · qwen2\.5-coder:7b @ 127\.0\.0\.1:\d+$/);
  const r = await collect(agent.provider, request({ model: agent.model, maxTokens: agent.maxTokens }));
  assert.match(r.text, /^I'm unable to provide real-time weather/);
  const seen = server.requests.at(-1)!;
  assert.equal(seen.path, '/v1/chat/completions');
  assert.equal(seen.body.model, 'qwen2.5-coder:7b');
  assert.equal(seen.body.max_tokens, 8192);
});
