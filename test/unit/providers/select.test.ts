import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configSchema, type LegionConfig } from '../../../src/config/schema';
import { createProviderRegistry, DEMO_NOTICE, type Env, type ProviderRegistry, type RegistryOptions } from '../../../src/providers/select';
import { testTempDir } from '../../helpers/tmp';

const APP_DIR = fileURLToPath(new URL('../../../', import.meta.url));

function config(over: Record<string, unknown> = {}): LegionConfig {
  return configSchema().parse({ providers: { anthropic: { model: 'claude-haiku-4-5' }, openai: { model: 'gpt-4.1-mini' } }, ...over });
}

async function registry(env: Env, extra: Partial<RegistryOptions> = {}): Promise<ProviderRegistry> {
  const r = await createProviderRegistry({ config: config(), env, appDir: APP_DIR, ...extra });
  if (!r.ok) throw new Error(r.error);
  return r.registry;
}

async function failure(env: Env, extra: Partial<RegistryOptions> = {}): Promise<string> {
  const r = await createProviderRegistry({ config: config(), env, appDir: APP_DIR, ...extra });
  assert.equal(r.ok, false, 'expected a selection error');
  return r.ok ? '' : r.error;
}

test('auto without keys: the labelled demo on the faux provider with the built-in script', async () => {
  const r = await registry({});
  assert.equal(r.providerId, 'faux');
  assert.equal(r.demo, true);
  assert.equal(r.label, 'demo');
  assert.equal(r.notice, DEMO_NOTICE);
  assert.equal(r.model, 'faux');
  const resolved = r.resolve({ provider: 'default', model: 'default' });
  assert.ok(resolved.ok);
  assert.equal(resolved.provider.id, 'faux');
  assert.match((resolved.provider as unknown as { script: { file: string } }).script.file, /config\/demo-script\.yaml$/);
});

test('auto picks ANTHROPIC_API_KEY, then OPENAI_API_KEY, then OPENAI_BASE_URL; blank keys do not count', async () => {
  const cases: Array<[Env, string, string]> = [
    [{ ANTHROPIC_API_KEY: 'a' }, 'anthropic', 'anthropic · claude-haiku-4-5'],
    [{ OPENAI_API_KEY: 'o' }, 'openai', 'openai · gpt-4.1-mini'],
    [{ ANTHROPIC_API_KEY: 'a', OPENAI_API_KEY: 'o' }, 'anthropic', 'anthropic · claude-haiku-4-5'],
    [{ ANTHROPIC_API_KEY: '  ', OPENAI_API_KEY: 'o' }, 'openai', 'openai · gpt-4.1-mini'],
    [{ OPENAI_BASE_URL: 'http://localhost:11434/v1' }, 'openai', 'openai · gpt-4.1-mini @ localhost:11434'],
    [{ ANTHROPIC_API_KEY: 'a', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/' }, 'anthropic', 'anthropic · claude-haiku-4-5 @ 127.0.0.1:9'],
    [{ ANTHROPIC_API_KEY: '' }, 'faux', 'demo'],
  ];
  for (const [env, provider, label] of cases) {
    const r = await registry(env);
    assert.equal(r.providerId, provider, JSON.stringify(env));
    assert.equal(r.label, label, JSON.stringify(env));
    assert.equal(r.demo, provider === 'faux');
  }
});

test('--provider beats LEGION_PROVIDER beats config; a missing key is one line naming the variable', async () => {
  const both = { ANTHROPIC_API_KEY: 'a', OPENAI_API_KEY: 'o' };
  assert.equal((await registry({ ...both, LEGION_PROVIDER: 'openai' })).providerId, 'openai');
  assert.equal((await registry({ ...both, LEGION_PROVIDER: 'openai' }, { overrides: { provider: 'anthropic' } })).providerId, 'anthropic');
  assert.equal((await registry(both, { config: config({ provider: 'openai' }) })).providerId, 'openai');
  assert.equal((await registry({ ...both, LEGION_PROVIDER: 'anthropic' }, { config: config({ provider: 'openai' }) })).providerId, 'anthropic');

  assert.equal(await failure({ OPENAI_API_KEY: 'o', LEGION_PROVIDER: 'anthropic' }), 'provider anthropic (LEGION_PROVIDER) needs an API key: set ANTHROPIC_API_KEY');
  assert.equal(
    await failure({ ANTHROPIC_API_KEY: 'a' }, { overrides: { provider: 'openai' } }),
    'provider openai (--provider) needs an API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)',
  );
  assert.equal(await failure({}, { config: config({ provider: 'anthropic' }) }), 'provider anthropic (config provider) needs an API key: set ANTHROPIC_API_KEY');
  assert.equal(await failure({ LEGION_PROVIDER: 'mistral' }), 'unknown provider "mistral" (LEGION_PROVIDER): use auto, anthropic, openai, gemini or faux');
});

test('openai against a compatible server needs no key; against api.openai.com it does', async () => {
  assert.equal((await registry({ LEGION_PROVIDER: 'openai', OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1' })).providerId, 'openai');
  assert.match(await failure({ LEGION_PROVIDER: 'openai', OPENAI_BASE_URL: 'https://api.openai.com/v1' }), /set OPENAI_API_KEY/);
  const viaConfig = await registry({ LEGION_PROVIDER: 'openai' }, { config: config({ providers: { openai: { baseUrl: 'http://localhost:8000/v1' } } }) });
  assert.equal(viaConfig.label, 'openai · gpt-5.4 @ localhost:8000');
});

test('model: --model > LEGION_MODEL > config model > providers.<id>.model > built-in default', async () => {
  const env = { ANTHROPIC_API_KEY: 'a' };
  assert.equal((await registry(env)).model, 'claude-haiku-4-5');
  assert.equal((await registry(env, { config: config({ model: 'claude-opus-4-1' }) })).model, 'claude-opus-4-1');
  assert.equal((await registry({ ...env, LEGION_MODEL: 'claude-3-5-haiku' }, { config: config({ model: 'claude-opus-4-1' }) })).model, 'claude-3-5-haiku');
  assert.equal((await registry({ ...env, LEGION_MODEL: 'x' }, { overrides: { model: 'claude-sonnet-4-5' } })).model, 'claude-sonnet-4-5');
  const bare = await createProviderRegistry({ config: configSchema().parse({}), env, appDir: APP_DIR });
  assert.ok(bare.ok);
  assert.equal(bare.registry.model, 'claude-sonnet-5-5');
});

test('per-agent provider and model', async () => {
  const r = await registry({ ANTHROPIC_API_KEY: 'a', OPENAI_API_KEY: 'o', LEGION_MODEL: 'claude-opus-4-1' });
  const same = r.resolve({ id: 'ur-agent', provider: 'default', model: 'default' });
  assert.ok(same.ok);
  assert.deepEqual([same.providerId, same.model, same.maxTokens], ['anthropic', 'claude-opus-4-1', 8192]);
  const other = r.resolve({ id: 'coder', provider: 'openai', model: 'default' });
  assert.ok(other.ok);
  assert.deepEqual([other.providerId, other.model, other.provider.id], ['openai', 'gpt-4.1-mini', 'openai'], "another provider's default model, not the run's");
  const explicit = r.resolve({ id: 'cheap', model: 'claude-haiku-4-5' });
  assert.ok(explicit.ok);
  assert.deepEqual([explicit.providerId, explicit.model], ['anthropic', 'claude-haiku-4-5']);
  const a1 = r.get('anthropic');
  const a2 = r.get('anthropic');
  assert.ok(a1.ok && a2.ok && a1.provider === a2.provider, 'one provider instance per id');
});

test('per-agent errors: a provider without a key, an unknown provider', async () => {
  const r = await registry({ ANTHROPIC_API_KEY: 'a' });
  const missing = r.resolve({ id: 'coder', provider: 'openai' });
  assert.deepEqual(missing, { ok: false, error: 'provider openai (used by agent coder) needs an API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)' });
  assert.deepEqual(r.resolve({ id: 'x', provider: 'mistral' }), { ok: false, error: 'unknown provider "mistral": use anthropic, openai, gemini, faux or default' });
  const maxTokens = await registry({ ANTHROPIC_API_KEY: 'a' }, { config: config({ providers: { maxTokens: 1000, anthropic: { maxTokens: 2000 }, openai: {} } }) });
  const resolved = maxTokens.resolve({});
  assert.ok(resolved.ok);
  assert.equal(resolved.maxTokens, 2000);
});

test('faux with a script: LEGION_FAUX_SCRIPT > providers.faux.script (relative to cwd); errors name file and line', async (t) => {
  const dir = await testTempDir(t, 'legion-select-');
  await writeFile(join(dir, 'mine.yaml'), 'replies:\n  - text: scripted\n');
  await writeFile(join(dir, 'bad.yaml'), 'replies:\n  - agent: x\n    colour: red\n');
  const viaEnv = await registry({ LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'mine.yaml') });
  assert.equal(viaEnv.demo, false);
  assert.equal(viaEnv.label, 'faux · mine.yaml');
  assert.equal(viaEnv.notice, null);
  const viaConfig = await registry({}, { cwd: dir, config: config({ provider: 'faux', providers: { faux: { script: 'mine.yaml' } } }) });
  assert.equal(viaConfig.label, 'faux · mine.yaml');
  const explicitNoScript = await registry({ ANTHROPIC_API_KEY: 'a' }, { overrides: { provider: 'faux' } });
  assert.equal(explicitNoScript.demo, true, '--provider faux without a script runs the demo');
  assert.match(await failure({ LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'bad.yaml') }), /bad\.yaml:3: replies\.0\.colour: /);
  assert.match(await failure({ LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'none.yaml') }), /none\.yaml: cannot read the faux script \(no such file\)/);
});

test('an agent on faux while the run is on a real provider uses the named script or says what is missing', async (t) => {
  const r = await registry({ ANTHROPIC_API_KEY: 'a' });
  const faux = r.resolve({ id: 'tester', provider: 'faux' });
  assert.equal(faux.ok, false);
  if (!faux.ok) assert.match(faux.error, /set LEGION_FAUX_SCRIPT/);
  const dir = await testTempDir(t, 'legion-select-');
  await writeFile(join(dir, 's.yaml'), 'replies:\n  - text: from the script\n');
  const withScript = await registry({ ANTHROPIC_API_KEY: 'a', LEGION_FAUX_SCRIPT: join(dir, 's.yaml') });
  assert.equal(withScript.providerId, 'anthropic');
  const tester = withScript.resolve({ id: 'tester', provider: 'faux' });
  assert.ok(tester.ok);
  assert.equal(tester.provider.id, 'faux');
  assert.equal(tester.model, 'faux');
  const broken = await registry({ ANTHROPIC_API_KEY: 'a', LEGION_FAUX_SCRIPT: join(dir, 'missing.yaml') });
  const failed = broken.resolve({ id: 'tester', provider: 'faux' });
  assert.equal(failed.ok, false);
  if (!failed.ok) assert.match(failed.error, /missing\.yaml: cannot read the faux script/);
});
