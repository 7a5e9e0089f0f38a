import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPricing, loadPricing, parseModelsFile, defaultPricingFiles } from '../../../src/providers/pricing';
import { TRUSTED } from '../../../src/storage/workspace-trust';
import { testTempDir } from '../../helpers/tmp';

const SHIPPED = fileURLToPath(new URL('../../../config/models.yaml', import.meta.url));
const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0, cacheWriteTokens = 0) => ({
  inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens,
});

async function shipped() {
  const r = await loadPricing([SHIPPED]);
  if (!r.ok) throw new Error(r.error);
  return r.pricing;
}

test('the shipped prices load and cover the models the defaults use', async () => {
  const p = await shipped();
  for (const model of ['claude-sonnet-5-5', 'claude-opus-4-1', 'claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-3-5-haiku', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4o', 'gpt-4o-mini', 'o3', 'o4-mini', 'gpt-5', 'faux']) {
    assert.ok(p.priceOf(model), model);
  }
  assert.deepEqual(p.priceOf('claude-sonnet-4-5'), {
    input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, contextWindow: 200_000, above: { tokens: 200_000, input: 6, output: 22.5, cacheRead: 0.6, cacheWrite: 7.5 },
  });
});

test('every shipped model but the faux one has a context window; dated ids and aliases find it (docs/context.md)', async () => {
  const p = await shipped();
  for (const [id, price] of p.models) {
    if (id === 'faux') assert.equal(price.contextWindow, undefined, 'faux: context.defaultWindow applies');
    else assert.ok(price.contextWindow !== undefined && price.contextWindow >= 100_000, id);
  }
  assert.equal(p.windowOf('claude-sonnet-4-5-20250929'), 200_000);
  assert.equal(p.windowOf('gpt-4o-2024-08-06'), 128_000);
  assert.equal(p.windowOf('claude-mythos-5'), 1_000_000, 'an alias finds its base entry (claude-fable-5: 1M per the vendor page)');
  assert.equal(p.windowOf('claude-opus-4-6'), 1_000_000);
  assert.equal(p.windowOf('claude-opus-4-5-20251101'), 200_000);
  assert.equal(p.windowOf('llama3.1:8b'), null);
});

test('a bad contextWindow is a one-line error naming file and line', () => {
  const r = parseModelsFile('version: 1\nmodels:\n  local: { input: 0, output: 0, contextWindow: -5 }\n', 'models.yaml');
  assert.ok(!r.ok);
  assert.match(r.error, /^models\.yaml:3: models\.local\.contextWindow: /);
});

test('one million tokens of each kind cost the listed price', async () => {
  const p = await shipped();
  assert.equal(p.costOf('claude-opus-4-1', usage(1_000_000, 0)), 15);
  assert.equal(p.costOf('claude-opus-4-1', usage(0, 1_000_000)), 75);
  assert.equal(p.costOf('claude-haiku-4-5', usage(0, 0, 1_000_000)), 0.1);
  assert.equal(p.costOf('claude-haiku-4-5', usage(0, 0, 0, 1_000_000)), 1.25);
  assert.equal(p.costOf('gpt-4o-mini', usage(1_000_000, 1_000_000)), 0.75);
  assert.equal(p.costOf('faux', usage(5_000, 5_000)), 0);
});

test('dated and suffixed ids match their base entry; the longest base wins', async () => {
  const p = await shipped();
  assert.equal(p.priceOf('claude-sonnet-4-5-20250929'), p.priceOf('claude-sonnet-4-5'));
  assert.equal(p.priceOf('claude-3-5-haiku-latest'), p.priceOf('claude-3-5-haiku'));
  assert.equal(p.priceOf('claude-sonnet-4-20250514'), p.priceOf('claude-sonnet-4-0'), 'through the alias');
  assert.equal(p.priceOf('gpt-4o-mini-2024-07-18'), p.priceOf('gpt-4o-mini'));
  assert.equal(p.priceOf('gpt-4o-2024-08-06'), p.priceOf('gpt-4o'));
  assert.equal(p.priceOf('GPT-4.1-2025-04-14'), p.priceOf('gpt-4.1'), 'case-insensitive');
});

test('unknown models have no price: null, never 0', async () => {
  const p = await shipped();
  for (const model of ['llama3.1:8b', 'o3-pro', 'gpt-4o-audio-preview', 'claude-sonnet-4-5-extra', 'gpt-5.4-pro']) {
    assert.equal(p.priceOf(model), null, model);
    assert.equal(p.costOf(model, usage(10, 10)), null, model);
  }
});

test('long-context rates apply to the whole call above the threshold', () => {
  const p = createPricing({ m: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, above: { tokens: 200_000, input: 6, output: 22.5, cacheRead: 0.6, cacheWrite: 7.5 } } });
  assert.equal(p.costOf('m', usage(200_000, 0)), 0.6, 'at the threshold: base rate');
  assert.equal(p.costOf('m', usage(100_000, 1_000, 100_001)), (100_000 * 6 + 1_000 * 22.5 + 100_001 * 0.6) / 1e6);
});

test('omitted cache rates: plain input price, and long-context ones scaled', () => {
  const r = parseModelsFile('models:\n  m: { input: 2, output: 8, above: { tokens: 10, input: 4, output: 12 } }\n', 'x.yaml');
  assert.ok(r.ok);
  assert.deepEqual(r.table.m, { input: 2, output: 8, cacheRead: 2, cacheWrite: 2, above: { tokens: 10, input: 4, output: 12, cacheRead: 4, cacheWrite: 4 } });
});

test('a bad prices file names file, line and key', () => {
  const r = parseModelsFile('version: 1\nmodels:\n  m:\n    input: 1\n    output: -2\n', 'models.yaml');
  assert.equal(r.ok, false);
  if (!r.ok) assert.match(r.error, /^models\.yaml:5: models\.m\.output: /);
  const typo = parseModelsFile('models:\n  m: { input: 1, output: 2, cache_read: 1 }\n', 'models.yaml');
  assert.equal(typo.ok, false);
});

test('layered files: later ones override and add; missing ones are skipped', async (t) => {
  const dir = await testTempDir(t, 'legion-pricing-');
  const app = join(dir, 'app');
  const ws = join(dir, 'ws');
  await mkdir(join(app, 'config'), { recursive: true });
  await mkdir(join(ws, '.legion'), { recursive: true });
  await writeFile(join(app, 'config', 'models.yaml'), 'models:\n  a: { input: 1, output: 1 }\n  b: { input: 1, output: 1 }\n');
  await writeFile(join(ws, '.legion', 'models.yaml'), 'models:\n  b: { input: 9, output: 9 }\n  llama3.1: { input: 0, output: 0 }\n');
  const files = defaultPricingFiles(app, ws, join(dir, 'home'), TRUSTED);
  const r = await loadPricing(files);
  assert.ok(r.ok);
  assert.equal(r.pricing.priceOf('a')?.input, 1);
  assert.equal(r.pricing.priceOf('b')?.input, 9);
  assert.equal(r.pricing.costOf('llama3.1', usage(100, 100)), 0);
  await writeFile(join(ws, '.legion', 'models.yaml'), 'models: [\n');
  const bad = await loadPricing(files);
  assert.equal(bad.ok, false);
  if (!bad.ok) assert.match(bad.error, /\.legion\/models\.yaml:\d+: YAML syntax/);
});
