import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { loadConfig, precompileShippedConfig, validateLayers } from '../../../src/config/load';
import { parseYamlSource } from '../../../src/config/yaml-source';
import { forgetBuiltSchemas } from '../../../src/storage/lazy-schema';
import { withTempDir } from '../../helpers/tmp';

/**
 * The shipped config validated while the start-up snapshot builds (src/cli/snapshot-warm.ts) is
 * reused only when it is the only layer and its text is exactly the shipped one; every other
 * set of layers is validated as before (docs/performance.md#the-start-up-snapshot).
 */
const SHIPPED = resolve('config/legion.yaml');

function fresh(text: string) {
  const parsed = parseYamlSource(text, SHIPPED);
  assert.ok(parsed.ok);
  const loaded = validateLayers([parsed.source]);
  assert.ok(loaded.ok);
  return loaded.config;
}

test('precompiled config: the shipped file alone gives the validated config, a copy per load, without building a schema', async () => {
  const text = await readFile(SHIPPED, 'utf8');
  assert.equal(precompileShippedConfig(text, 'config/legion.yaml'), true);
  forgetBuiltSchemas();
  await withTempDir(async (dir) => {
    const files = { defaults: SHIPPED, user: join(dir, 'user', 'config.yaml'), project: join(dir, '.legion', 'config.yaml') };
    const first = await loadConfig(files);
    const second = await loadConfig(files);
    assert.equal(forgetBuiltSchemas(), 0, 'no zod schema was built: the kept result was used');
    assert.ok(first.ok && second.ok);
    assert.deepEqual(first.files, [SHIPPED]);
    assert.deepEqual(first.warnings, []);
    assert.deepEqual(first.config, fresh(text));
    assert.notEqual(first.config, second.config, 'each load gets its own config');
    first.config.ui.maxFps = 1;
    first.config.sandbox.hide.push('secrets/');
    assert.equal(second.config.ui.maxFps, fresh(text).ui.maxFps);
    const third = await loadConfig(files);
    assert.ok(third.ok);
    assert.deepEqual(third.config, fresh(text), 'a load changing its config does not change the next');
  });
});

test('precompiled config: a user or project layer, or an edited shipped file, is validated as it is', async () => {
  const text = await readFile(SHIPPED, 'utf8');
  precompileShippedConfig(text, 'config/legion.yaml');
  await withTempDir(async (dir) => {
    const files = { defaults: SHIPPED, user: join(dir, 'user', 'config.yaml'), project: join(dir, '.legion', 'config.yaml') };
    await mkdir(join(dir, 'user'), { recursive: true });
    await writeFile(files.user, 'ui:\n  maxFps: 12\n  nope: 1\n');
    const user = await loadConfig(files);
    assert.ok(user.ok);
    assert.equal(user.config.ui.maxFps, 12);
    assert.match(user.warnings.join('\n'), /unknown config key "ui\.nope"/);
    assert.deepEqual(user.files, [SHIPPED, files.user]);
    await writeFile(files.user, 'sandbox:\n  mode: sometimes\n');
    const bad = await loadConfig(files);
    assert.ok(!bad.ok);
    assert.match(bad.error, /config\.yaml:2: sandbox\.mode/);
    // The shipped file changed in place (a user editing the install): validated, its error named.
    const edited = join(dir, 'legion.yaml');
    await writeFile(edited, text.replace('maxFps: 30', 'maxFps: 0'));
    const shippedEdited = await loadConfig({ defaults: edited, user: join(dir, 'none.yaml'), project: null });
    assert.ok(!shippedEdited.ok);
    assert.match(shippedEdited.error, /legion\.yaml:\d+: ui\.maxFps/);
    // The shipped text as a project layer, with no defaults file: not the kept case (its file is not the defaults).
    await mkdir(join(dir, '.legion'), { recursive: true });
    await writeFile(files.project, text);
    const asProject = await loadConfig({ defaults: join(dir, 'missing.yaml'), user: join(dir, 'none.yaml'), project: files.project });
    assert.ok(asProject.ok);
    assert.deepEqual(asProject.files, [files.project]);
  });
});

test('precompiled config: a shipped text that does not validate cleanly is not kept (the build fails on it)', () => {
  assert.equal(precompileShippedConfig('ui: 5\n', 'config/legion.yaml'), false);
  assert.equal(precompileShippedConfig('ui:\n  nope: 1\n', 'config/legion.yaml'), false, 'a warning is not a clean default');
});
