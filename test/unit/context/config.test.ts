import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../../src/config/load';
import { configSchema } from '../../../src/config/schema';
import { withTempDir } from '../../helpers/tmp';

async function loadProject(project: string) {
  return withTempDir(async (dir) => {
    const paths = { defaults: resolve('config/legion.yaml'), user: join(dir, 'none.yaml'), project: join(dir, '.legion', 'config.yaml') };
    await mkdir(join(dir, '.legion'), { recursive: true });
    await writeFile(paths.project, project);
    return { result: await loadConfig(paths), file: paths.project };
  });
}

test('context and budgets: shipped defaults equal the schema defaults (all budgets off)', async () => {
  const { result } = await loadProject('version: 1\n');
  assert.ok(result.ok, !result.ok ? result.error : '');
  assert.deepEqual(result.config.context, { defaultWindow: 128_000, compactAt: 0.6, keepRecent: 0.3, evictToolResultsOver: 4000 });
  assert.deepEqual(result.config.budgets, { raiseBy: 1 });
  assert.deepEqual(configSchema().parse({}).context, result.config.context);
});

test('context and budgets: every bad value is a one-line error with file:line and key', async () => {
  const cases: Array<[string, RegExp]> = [
    ['context:\n  defaultWindow: 12\n', /:2: context\.defaultWindow: /],
    ['context:\n  defaultWindow: big\n', /:2: context\.defaultWindow: /],
    ['context:\n  compactAt: 1.5\n', /:2: context\.compactAt: /],
    ['context:\n  compactAt: 0\n', /:2: context\.compactAt: /],
    ['context:\n  keepRecent: -0.1\n', /:2: context\.keepRecent: /],
    ['context:\n  compactAt: 0.5\n  keepRecent: 0.7\n', /:3: context\.keepRecent: keepRecent must be smaller than compactAt/],
    ['context:\n  evictToolResultsOver: 2.5\n', /:2: context\.evictToolResultsOver: /],
    ['budgets:\n  runUsd: -1\n', /:2: budgets\.runUsd: /],
    ['budgets:\n  sessionUsd: "ten"\n', /:2: budgets\.sessionUsd: /],
    ['budgets:\n  turnTokens: 1.5\n', /:2: budgets\.turnTokens: /],
    ['budgets:\n  raiseBy: 0\n', /:2: budgets\.raiseBy: /],
  ];
  for (const [text, pattern] of cases) {
    const { result, file } = await loadProject(text);
    assert.ok(!result.ok, text);
    assert.ok(result.error.startsWith(`${file}:`), result.error);
    assert.match(result.error, pattern);
    assert.ok(!result.error.includes('\n'), 'one line');
  }
});
