import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPricing, parseModelsFile, precompileShippedModels } from '../../../src/providers/pricing';

/**
 * The shipped price table parsed while the start-up snapshot builds (src/cli/snapshot-warm.ts)
 * is reused only for exactly its text, and no load can change it for the next
 * (docs/performance.md#the-start-up-snapshot).
 */
const TEXT = `models:
  model-a:
    input: 3
    output: 15
    contextWindow: 200000
    aliases: [a-alias]
  model-b:
    input: 1
    output: 2
    above: { tokens: 100000, input: 2, output: 4 }
`;

test('precompiled prices: the same text gives the same table as a fresh parse, shared and frozen', () => {
  const fresh = parseModelsFile(TEXT, 'models.yaml');
  assert.ok(fresh.ok);
  assert.equal(precompileShippedModels(TEXT, 'config/models.yaml'), true);
  const first = parseModelsFile(TEXT, '/app/config/models.yaml');
  const second = parseModelsFile(TEXT, '/app/config/models.yaml');
  assert.ok(first.ok && second.ok);
  assert.deepEqual(first.table, fresh.table);
  assert.equal(first.table['model-a'], second.table['model-a'], 'reused, not parsed again');
  assert.notEqual(first.table, second.table, 'each load gets its own table');
  assert.ok(Object.isFrozen(first.table['model-b']) && Object.isFrozen(first.table['model-b']!.above));
  first.table['model-a'] = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  const third = parseModelsFile(TEXT, '/app/config/models.yaml');
  assert.ok(third.ok);
  assert.equal(third.table['model-a']!.input, 3, 'a load replacing an entry of its table does not change the next load');
  assert.throws(() => {
    (third.table['model-a'] as { input: number }).input = 0;
  }, TypeError);
});

test('precompiled prices: an edited text is parsed as it is, and later files still override (a price the user set applies)', async () => {
  precompileShippedModels(TEXT, 'config/models.yaml');
  const edited = parseModelsFile(TEXT.replace('input: 3', 'input: 30'), '/app/config/models.yaml');
  assert.ok(edited.ok);
  assert.equal(edited.table['model-a']!.input, 30);
  const dir = mkdtempSync(join(tmpdir(), 'legion-prices-'));
  try {
    writeFileSync(join(dir, 'shipped.yaml'), TEXT);
    writeFileSync(join(dir, 'user.yaml'), 'models:\n  model-a:\n    input: 7\n    output: 8\n');
    const loaded = await loadPricing([join(dir, 'shipped.yaml'), join(dir, 'user.yaml')]);
    assert.ok(loaded.ok);
    assert.equal(loaded.pricing.priceOf('model-a')?.input, 7);
    assert.equal(loaded.pricing.priceOf('a-alias')?.input, 3, 'the alias keeps the shipped entry');
    assert.equal(loaded.pricing.priceOf('model-b')?.output, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('precompiled prices: the shipped config/models.yaml gives the same table through the kept one', () => {
  const text = readFileSync(join(import.meta.dirname, '..', '..', '..', 'config', 'models.yaml'), 'utf8');
  const fresh = parseModelsFile(text, 'config/models.yaml');
  precompileShippedModels(text, 'config/models.yaml');
  const reused = parseModelsFile(text, '/app/config/models.yaml');
  assert.ok(fresh.ok && reused.ok);
  assert.deepEqual(reused.table, fresh.table);
});
