import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { withTempDir } from '../helpers/tmp';

const ROOT = process.cwd();
const BUNDLE = resolve(ROOT, 'dist', 'legion.js');

function newest(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((n) => newest(join(path, n))));
}

/**
 * Build the bundle once: only when missing or older than a source. Under scripts/test.mjs
 * (LEGION_TEST=1) it was just built, and rebuilding could race other e2e tests running it.
 */
function ensureBundle(): void {
  let built = 0;
  try { built = statSync(BUNDLE).mtimeMs; } catch { /* not built */ }
  if (built > 0 && process.env.LEGION_TEST === '1') return;
  const sources = Math.max(...['src', 'components', 'bin', 'package.json'].map((p) => newest(resolve(ROOT, p))));
  if (built >= sources) return;
  const r = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, `build failed: ${r.stderr}`);
}

function legion(args: string[], cwd: string) {
  const env = { ...process.env, LEGION_DEBUG: '' };
  return spawnSync(process.execPath, [BUNDLE, ...args], { cwd, encoding: 'utf8', env, timeout: 20_000 });
}

test('bundle: `node dist/legion.js init` in an empty folder creates the collective; a second run changes nothing', async () => {
  ensureBundle();
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
  ensureBundle();
  const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string };
  const version = legion(['--version'], ROOT);
  assert.equal(version.status, 0);
  assert.equal(version.stdout, `legion ${pkg.version}\n`);
  const unknown = legion(['nope'], ROOT);
  assert.equal(unknown.status, 2);
  assert.equal(unknown.stderr, 'legion: unknown command "nope" (see legion --help)\n');
});
