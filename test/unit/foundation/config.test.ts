import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { defaultConfigFiles, loadConfig, type ConfigFiles } from '../../../src/config/load';
import { deepMerge } from '../../../src/config/merge';
import { parseYamlSource } from '../../../src/config/yaml-source';
import { withTempDir } from '../../helpers/tmp';
import { TRUSTED } from '../../../src/storage/workspace-trust';

const DEFAULTS = resolve('config/legion.yaml');

/** Write user/project files (null = absent) in `dir` and return the three paths. */
async function files(dir: string, user: string | null, project: string | null, defaults = DEFAULTS): Promise<ConfigFiles & { project: string }> {
  const paths = { defaults, user: join(dir, 'user', 'config.yaml'), project: join(dir, '.legion', 'config.yaml') };
  if (user !== null) { await mkdir(join(dir, 'user'), { recursive: true }); await writeFile(paths.user, user); }
  if (project !== null) { await mkdir(join(dir, '.legion'), { recursive: true }); await writeFile(paths.project, project); }
  return paths;
}

async function load(user: string | null, project: string | null) {
  return withTempDir(async (dir) => {
    const f = await files(dir, user, project);
    return { result: await loadConfig(f), f };
  });
}

test('config: the shipped defaults load without warnings and match the schema defaults', async () => {
  const { result } = await load(null, null);
  assert.ok(result.ok, !result.ok ? result.error : '');
  assert.deepEqual(result.warnings, []);
  assert.deepEqual(result.files, [DEFAULTS]);
  assert.equal(result.config.provider, 'auto');
  assert.equal(result.config.model, null);
  assert.equal(result.config.runtime.maxIterations, 25);
  assert.equal(result.config.runtime.maxDepth, 10);
  assert.equal(result.config.providers.anthropic.model, 'claude-sonnet-5-5');
  assert.equal(result.config.ui.maxLanes, 4);
});

test('config: no files at all still gives a complete config from schema defaults', async () => {
  await withTempDir(async (dir) => {
    const result = await loadConfig(await files(dir, null, null, join(dir, 'missing.yaml')));
    assert.ok(result.ok);
    assert.deepEqual(result.files, []);
    assert.equal(result.config.runtime.maxIterations, 25);
    assert.equal(result.config.providers.maxTokens, 8192);
  });
});

test('config: layering defaults ← user ← project, deep merge, arrays replace', async () => {
  const { result, f } = await load(
    'provider: openai\nruntime:\n  maxIterations: 5\n  maxDepth: 4\nui:\n  maxLanes: 2\nkeymap:\n  send: [enter, ctrl+s]\n  help: f1\n',
    'runtime:\n  maxDepth: 3\nproviders:\n  openai:\n    model: local-model\nkeymap:\n  send: [ctrl+enter]\n',
  );
  assert.ok(result.ok, !result.ok ? result.error : '');
  assert.deepEqual(result.files, [DEFAULTS, f.user, f.project]);
  const c = result.config;
  assert.equal(c.provider, 'openai'); // user over defaults
  assert.equal(c.runtime.maxIterations, 5); // user, untouched by project
  assert.equal(c.runtime.maxDepth, 3); // project over user
  assert.equal(c.runtime.shellTimeoutMs, 120_000); // defaults kept beside overrides
  assert.equal(c.ui.maxLanes, 2);
  assert.equal(c.ui.maxFps, 30);
  assert.equal(c.providers.openai.model, 'local-model');
  assert.equal(c.providers.anthropic.model, 'claude-sonnet-5-5');
  assert.deepEqual(c.keymap, { send: ['ctrl+enter'], help: 'f1' }); // arrays replace, maps merge
});

test('deepMerge: objects by key, arrays and scalars replace, undefined keeps, inputs untouched', () => {
  const a = { x: { y: 1, z: [1, 2] }, k: 'a' };
  const b = { x: { z: [3] }, k: undefined, n: null };
  assert.deepEqual(deepMerge(a, b), { x: { y: 1, z: [3] }, k: 'a', n: null });
  assert.deepEqual(a, { x: { y: 1, z: [1, 2] }, k: 'a' });
  assert.deepEqual(deepMerge({ x: { y: 1 } }, { x: 5 }), { x: 5 });
  assert.deepEqual(deepMerge({ x: 5 }, { x: { y: 1 } }), { x: { y: 1 } });
});

test('config error: malformed YAML → file:line: YAML syntax: …, one line', async () => {
  const { result, f } = await load('runtime:\n  maxIterations: 5\n  maxDepth: [1, 2\nui: {}\n', null);
  assert.ok(!result.ok);
  assert.match(result.error, new RegExp(`^${escape(f.user)}:[34]: YAML syntax: .+`));
  assert.ok(!result.error.includes('\n'), result.error);
  const dup = await load(null, 'ui:\n  maxLanes: 1\nui:\n  bell: false\n');
  assert.ok(!dup.result.ok);
  assert.equal(dup.result.error, `${dup.f.project}:3: YAML syntax: Map keys must be unique`);
  const tab = await load(null, 'ui:\n\tmaxLanes: 1\n');
  assert.ok(!tab.result.ok && /:2: YAML syntax: /.test(tab.result.error), JSON.stringify(tab.result));
});

test('config error: wrong type → file:line of the key in the file that set it: key.path: message', async () => {
  // The bad value is in the user file; the project file sets a sibling and must not be blamed.
  const { result, f } = await load('# comment\n\nruntime:\n  maxDepth: 4\n  maxIterations: "ten"\n', 'runtime:\n  maxDepth: 3\n');
  assert.ok(!result.ok);
  assert.match(result.error, new RegExp(`^${escape(f.user)}:5: runtime\\.maxIterations: .*number`));
  assert.ok(!result.error.includes('\n'));
  // The project overriding a good user value with a bad one: the project is blamed.
  const over = await load('ui:\n  maxLanes: 2\n', 'provider: openai\nui:\n  bell: true\n  maxLanes: 9\n');
  assert.ok(!over.result.ok);
  assert.match(over.result.error, new RegExp(`^${escape(over.f.project)}:4: ui\\.maxLanes: `));
  // Enum, flow style, nested provider settings, array items.
  const cases: Array<[string, RegExp]> = [
    ['provider: mistral\n', /:1: provider: /],
    ['ui: { plain: maybe }\n', /:1: ui\.plain: /],
    ['providers:\n  anthropic:\n    baseUrl: not a url\n', /:3: providers\.anthropic\.baseUrl: /],
    ['keymap:\n  send:\n    - enter\n    - 3\n', /:4: keymap\.send\.1: .*string/],
    ['runtime: 7\n', /:1: runtime: /],
    ['version: 2\n', /:1: version: /],
  ];
  for (const [project, pattern] of cases) {
    const r = await load(null, project);
    assert.ok(!r.result.ok, project);
    assert.ok(r.result.error.startsWith(r.f.project + ':'), r.result.error);
    assert.match(r.result.error, pattern);
  }
});

test('config: an unknown key is a warning naming it (file:line), not an error; the rest applies', async () => {
  const { result, f } = await load('ui:\n  maxLanes: 3\n  colour: blue\n', 'runtim:\n  maxDepth: 2\nruntime:\n  maxDepth: 2\n  speed: 9\n');
  assert.ok(result.ok, !result.ok ? result.error : '');
  assert.equal(result.config.ui.maxLanes, 3);
  assert.equal(result.config.runtime.maxDepth, 2);
  assert.deepEqual([...result.warnings].sort(), [
    `${f.project}:1: unknown config key "runtim" (ignored)`,
    `${f.project}:5: unknown config key "runtime.speed" (ignored)`,
    `${f.user}:3: unknown config key "ui.colour" (ignored)`,
  ]);
  assert.ok(!('colour' in result.config.ui));
});

test('config: an unknown key beside a wrong type still reports the type error', async () => {
  const { result, f } = await load(null, 'extra: 1\nruntime:\n  maxDepth: -1\n');
  assert.ok(!result.ok);
  assert.match(result.error, new RegExp(`^${escape(f.project)}:3: runtime\\.maxDepth: `));
});

test('config error: a top level that is not a mapping', async () => {
  for (const text of ['- a\n- b\n', 'just a string\n', '42\n']) {
    const { result, f } = await load(text, null);
    assert.ok(!result.ok);
    assert.equal(result.error, `${f.user}:1: the config must be a mapping of keys to values`);
  }
  // Empty files and comment-only files are empty mappings.
  for (const text of ['', '# nothing here\n', '~\n']) {
    const { result } = await load(null, text);
    assert.ok(result.ok, text);
  }
});

test('config error: an unreadable file names it', async () => {
  await withTempDir(async (dir) => {
    const f = await files(dir, null, null);
    await mkdir(f.project, { recursive: true }); // a folder where the file should be
    const result = await loadConfig(f);
    assert.ok(!result.ok);
    assert.match(result.error, new RegExp(`^${escape(f.project)}: cannot read: EISDIR`));
    assert.ok(!result.error.includes('\n'));
  });
  await withTempDir(async (dir) => {
    const f = await files(dir, 'ui: {}\n', null);
    await chmod(f.user, 0o000);
    const result = await loadConfig(f);
    if (result.ok) return; // root reads anything: the EISDIR case above covers the path
    assert.match(result.error, new RegExp(`^${escape(f.user)}: cannot read: EACCES`));
  });
});

test('parseYamlSource: lineOf finds keys, nested keys and sequence items; null for none', () => {
  const parsed = parseYamlSource('a:\n  b:\n    - x\n    - y\n  c: 1\n', 'f.yaml');
  assert.ok(parsed.ok);
  assert.equal(parsed.source.lineOf(['a']), 1);
  assert.equal(parsed.source.lineOf(['a', 'c']), 5);
  assert.equal(parsed.source.lineOf(['a', 'b', 1]), 4);
  assert.equal(parsed.source.lineOf(['a', 'zzz']), 1, 'nearest parent');
});

test('defaultConfigFiles: shipped, XDG user and project paths; no project layer in an untrusted workspace', () => {
  const saved = process.env.XDG_CONFIG_HOME;
  delete process.env.XDG_CONFIG_HOME;
  try {
    assert.deepEqual(defaultConfigFiles('/app', '/work', '/home/u', TRUSTED), {
      defaults: '/app/config/legion.yaml', user: '/home/u/.config/legion/config.yaml', project: '/work/.legion/config.yaml',
    });
    assert.equal(defaultConfigFiles('/app', '/work', '/home/u', { trusted: false, reason: 'no-marker', detail: 'x' }).project, null);
  } finally {
    if (saved !== undefined) process.env.XDG_CONFIG_HOME = saved;
  }
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
