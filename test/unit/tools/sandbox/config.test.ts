import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../../../src/config/load';
import { withTempDir } from '../../../helpers/tmp';

async function loadProject(project: string) {
  return withTempDir(async (dir) => {
    const paths = { defaults: resolve('config/legion.yaml'), user: join(dir, 'none.yaml'), project: join(dir, '.legion', 'config.yaml') };
    await mkdir(join(dir, '.legion'), { recursive: true });
    await writeFile(paths.project, project);
    return { result: await loadConfig(paths), file: paths.project };
  });
}

test('sandbox config: defaults to auto with no network', async () => {
  const { result } = await loadProject('version: 1\n');
  assert.ok(result.ok);
  assert.deepEqual(result.config.sandbox, { mode: 'auto', network: 'none', env: [], hide: [] });
});

test('sandbox config: the short form, the block form and a host list', async () => {
  const short = await loadProject('sandbox: on\n');
  assert.ok(short.result.ok, !short.result.ok ? short.result.error : '');
  assert.deepEqual(short.result.config.sandbox, { mode: 'on', network: 'none', env: [], hide: [] });
  const block = await loadProject('sandbox:\n  network: all\n');
  assert.ok(block.result.ok);
  assert.deepEqual(block.result.config.sandbox, { mode: 'auto', network: 'all', env: [], hide: [] });
  const hosts = await loadProject('sandbox:\n  mode: off\n  network: [registry.npmjs.org, "*.github.com"]\n');
  assert.ok(hosts.result.ok);
  assert.deepEqual(hosts.result.config.sandbox, { mode: 'off', network: ['registry.npmjs.org', '*.github.com'], env: [], hide: [] });
});

test('sandbox config: bad values are one-line errors naming file, line and key', async () => {
  const mode = await loadProject('version: 1\nsandbox:\n  mode: sometimes\n');
  assert.equal(mode.result.ok, false);
  assert.ok(!mode.result.ok);
  assert.match(mode.result.error, new RegExp(`^${mode.file}:3: sandbox.mode: `));
  assert.doesNotMatch(mode.result.error, /\n/);
  const host = await loadProject('sandbox:\n  network:\n    - ok.example.com\n    - "http://bad/"\n');
  assert.ok(!host.result.ok);
  assert.match(host.result.error, new RegExp(`^${host.file}:4: sandbox.network.1: not a host name`));
  const word = await loadProject('sandbox:\n  network: some\n');
  assert.ok(!word.result.ok);
  assert.match(word.result.error, /:2: sandbox.network/);
  const unknown = await loadProject('sandbox:\n  mode: on\n  strict: true\n');
  assert.ok(unknown.result.ok);
  assert.match(unknown.result.warnings.join('\n'), /:3: unknown config key "sandbox.strict"/);
});

test('sandbox config: env names and hide paths are checked one by one', async () => {
  const good = await loadProject('sandbox:\n  env: [NODE_ENV, NPM_CONFIG_*]\n  hide: [~/.config/mytool, /srv/keys, secrets/]\n');
  assert.ok(good.result.ok, !good.result.ok ? good.result.error : '');
  assert.deepEqual(good.result.config.sandbox.env, ['NODE_ENV', 'NPM_CONFIG_*']);
  assert.deepEqual(good.result.config.sandbox.hide, ['~/.config/mytool', '/srv/keys', 'secrets/']);
  const env = await loadProject('sandbox:\n  env:\n    - OK\n    - "$HOME"\n');
  assert.ok(!env.result.ok);
  assert.match(env.result.error, new RegExp(`^${env.file}:4: sandbox.env.1: not a variable name`));
  const star = await loadProject('sandbox:\n  env: ["*"]\n');
  assert.ok(!star.result.ok, 'a bare * would pass everything');
  const hide = await loadProject('sandbox:\n  hide: ["~"]\n');
  assert.ok(!hide.result.ok);
  assert.match(hide.result.error, /sandbox.hide.0: not a path to hide/);
});
