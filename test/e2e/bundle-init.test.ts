import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { withTempDir } from '../helpers/tmp';
import { bundlePath as BUNDLE, ensureBundle } from '../helpers/bundle';

const ROOT = process.cwd();

function legion(args: string[], cwd: string) {
  const env = { ...process.env, LEGION_DEBUG: '' };
  return spawnSync(process.execPath, [BUNDLE, ...args], { cwd, encoding: 'utf8', env, timeout: 20_000 });
}

test('bundle: `node dist/legion.js init` in an empty folder creates the collective; a second run changes nothing', async () => {
  ensureBundle({ e2e: true });
  await withTempDir(async (dir) => {
    const first = legion(['init'], dir);
    assert.equal(first.status, 0, first.stderr);
    assert.equal(first.stderr, '');
    assert.match(first.stdout, /created .*\.legion/);
    const participants = join(dir, '.legion', 'collective', 'participants');
    assert.deepEqual(readdirSync(participants).sort(), ['resource-agent.json', 'ur-agent.json', 'user.json']);
    const ur = JSON.parse(readFileSync(join(participants, 'ur-agent.json'), 'utf8'));
    assert.equal(ur.kind, 'agent');
    assert.ok(ur.systemPrompt.length > 100);
    const before = readFileSync(join(participants, 'ur-agent.json'), 'utf8');
    const second = legion(['init'], dir);
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stdout, /is ready/);
    assert.equal(readFileSync(join(participants, 'ur-agent.json'), 'utf8'), before);
  });
});

test('bundle: --version, and an unknown command exits 2 with one line', () => {
  ensureBundle({ e2e: true });
  const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string };
  const version = legion(['--version'], ROOT);
  assert.equal(version.status, 0);
  assert.equal(version.stdout, `legion ${pkg.version}\n`);
  const unknown = legion(['nope'], ROOT);
  assert.equal(unknown.status, 2);
  assert.equal(unknown.stderr, 'legion: unknown command "nope" (see legion --help)\n');
});
