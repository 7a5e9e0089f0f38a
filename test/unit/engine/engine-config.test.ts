import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../../src/config/load';
import { withTempDir } from '../../helpers/tmp';

async function loadProject(project: string) {
  return withTempDir(async (dir) => {
    const paths = { defaults: resolve('config/legion.yaml'), user: join(dir, 'user.yaml'), project: join(dir, '.legion', 'config.yaml') };
    await mkdir(join(dir, '.legion'), { recursive: true });
    await writeFile(paths.project, project);
    return { result: await loadConfig(paths), paths };
  });
}

test('engine config: in-process by default; restate with both URLs (a trailing slash dropped)', async () => {
  const plain = await loadProject('ui: { bell: false }\n');
  assert.ok(plain.result.ok);
  assert.deepEqual(plain.result.config.engine, { kind: 'in-process' });
  const restate = await loadProject('engine:\n  kind: restate\n  ingress: http://127.0.0.1:8080/\n  admin: https://engine.example:9070\n');
  assert.ok(restate.result.ok, restate.result.ok ? '' : restate.result.error);
  assert.deepEqual(restate.result.config.engine, { kind: 'restate', ingress: 'http://127.0.0.1:8080', admin: 'https://engine.example:9070' });
});

test('engine config: each mistake is one line naming the file, the line and the key', async () => {
  const cases: Array<[string, RegExp]> = [
    ['engine: { kind: temporal }\n', /:1: engine\.kind: /],
    ['engine:\n  kind: restate\n  admin: http://127.0.0.1:9070\n', /: engine\.ingress: set both ingress and admin, or neither/],
    ['engine:\n  kind: restate\n  ingress: not a url\n  admin: http://127.0.0.1:9070\n', /:3: engine\.ingress: not a URL/],
    ['engine:\n  kind: restate\n  ingress: file:///tmp/x\n  admin: http://127.0.0.1:9070\n', /:3: engine\.ingress: must be an http/],
    ['engine:\n  kind: in-process\n  ingress: nope\n', /:3: engine\.ingress: not a URL/],
    ['engine:\n  kind: restate\n  identityKey: ssh-ed25519 AAAA\n', /:3: engine\.identityKey: not a request identity public key/],
    ['engine:\n  kind: restate\n  identityKey: []\n', /engine\.identityKey: /],
  ];
  for (const [project, pattern] of cases) {
    const { result, paths } = await loadProject(project);
    assert.ok(!result.ok, `accepted: ${project}`);
    assert.ok(result.error.startsWith(paths.project + ':'), result.error);
    assert.match(result.error, pattern);
    assert.ok(!result.error.includes('\n'), result.error);
  }
});

test('engine config: restate without URLs means the local engine of legion engine up', async () => {
  const { result } = await loadProject('engine: { kind: restate }\n');
  assert.ok(result.ok, result.ok ? '' : result.error);
  assert.deepEqual(result.config.engine, { kind: 'restate' });
});

test('engine config: a layer may switch back to in-process while another keeps the URLs', async () => {
  const { result } = await loadProject('engine:\n  kind: in-process\n  ingress: http://127.0.0.1:8080\n  admin: http://127.0.0.1:9070\n');
  assert.ok(result.ok, result.ok ? '' : result.error);
  assert.equal(result.config.engine.kind, 'in-process');
  assert.deepEqual(result.warnings, []);
});

test('engine config: the engine\'s request identity key, one or a list while it is rotated', async () => {
  const key = 'publickeyv1_5BYGELEnryj4UE99cU1PR7WdQ6G5EMsbbikyEHmvi3uN';
  const one = await loadProject(`engine: { kind: restate, ingress: http://10.0.0.5:8080, admin: http://10.0.0.5:9070, identityKey: ${key} }\n`);
  assert.ok(one.result.ok, one.result.ok ? '' : one.result.error);
  assert.equal(one.result.config.engine.kind === 'restate' && one.result.config.engine.identityKey, key);
  const two = await loadProject(`engine: { kind: restate, identityKey: [${key}, publickeyv1_2G8dCQhArfvGpzPw5Vx2ALciR4xCLHfS5YaT93XjNxX9] }\n`);
  assert.ok(two.result.ok, two.result.ok ? '' : two.result.error);
});
