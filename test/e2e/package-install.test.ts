import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { makeTempDir } from '../helpers/tmp';
import { REPO_ROOT, cleanAppEnv } from '../helpers/bundle';

/**
 * The package as a user gets it: `npm pack` on a clean copy of the checkout (no dist/ yet, so
 * the prepack build must make it), `npm install -g` of the tarball into a temporary prefix, and
 * the installed `legion` run in a folder of its own. Also: a fresh install has no dependency
 * install script left unreviewed (package.json allowScripts), so npm prints no warning.
 */
const npm = (args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): SpawnSyncReturns<string> =>
  spawnSync('npm', [...args], { cwd, env: { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' }, encoding: 'utf8' });

const hasNpm = spawnSync('npm', ['--version'], { encoding: 'utf8' }).status === 0;

/** The checkout's files as a fresh clone has them (tracked and new, not ignored), without dist/. */
function copyCheckout(to: string): void {
  const listed = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.equal(listed.status, 0, listed.stderr);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(REPO_ROOT, file))) continue; // deleted, not yet committed
    if (/^(node_modules|dist)(\/|$)/.test(file)) continue; // a symlinked node_modules is not ignored by `node_modules/`
    mkdirSync(dirname(join(to, file)), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(to, file));
  }
  // The build needs the dev dependencies; a clean clone gets them from `npm ci`.
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(to, 'node_modules'), 'dir');
}

test('no dependency install script is left unreviewed: a fresh npm install prints no install-scripts warning', { skip: !hasNpm && 'npm is not installed' }, () => {
  const r = npm(['install-scripts', 'ls', '--json'], REPO_ROOT);
  assert.equal(r.status, 0, r.stderr);
  const pending = (JSON.parse(r.stdout) as { allowScripts?: unknown[] }).allowScripts ?? [];
  assert.deepEqual(pending, [], 'decide each in package.json allowScripts (true: its script runs; false: not needed)');
});

test('npm pack of a fresh checkout installs globally and runs: legion --version, legion run in a temp folder', { skip: !hasNpm && 'npm is not installed', timeout: 600_000 }, async () => {
  const tmp = await makeTempDir('legion-pack-e2e-');
  try {
    const checkout = join(tmp.dir, 'checkout');
    copyCheckout(checkout);
    assert.ok(!existsSync(join(checkout, 'dist')), 'a fresh clone has no dist/');

    const packed = npm(['pack', '--json', '--pack-destination', tmp.dir], checkout);
    assert.equal(packed.status, 0, packed.stderr);
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    const files = info!.files.map((f) => f.path);
    assert.ok(files.includes('dist/legion.js'), files.join(', '));
    assert.equal(files.filter((f) => /^dist\/legion-app-[0-9a-f]+\.cjs$/.test(f)).length, 1, 'exactly one bundle');
    assert.ok(files.includes('config/legion.yaml') && files.includes('config/rules.yaml') && files.includes('README.md'));
    assert.deepEqual(files.filter((f) => /^(test|src|components|scripts)\//.test(f)), [], 'no sources or tests in the package');

    const prefix = join(tmp.dir, 'prefix');
    const installed = npm(['install', '-g', '--prefix', prefix, '--prefer-offline', join(tmp.dir, info!.filename)], tmp.dir);
    assert.equal(installed.status, 0, installed.stderr);
    assert.doesNotMatch(installed.stderr, /install-scripts|allowScripts/);

    const legion = join(prefix, 'bin', 'legion');
    const folder = join(tmp.dir, 'some-project');
    mkdirSync(folder);
    const env = { ...cleanAppEnv(), PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}`, HOME: tmp.dir };
    const version = spawnSync('legion', ['--version'], { cwd: folder, env, encoding: 'utf8' });
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout.trim(), `legion ${JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version}`);

    const script = join(tmp.dir, 'script.yaml');
    writeFileSync(script, 'version: 1\nreplies:\n  - { agent: ur-agent, on: message, text: "hello from the installed legion" }\n');
    const run = spawnSync(legion, ['run', 'hi'], { cwd: folder, env: { ...env, LEGION_FAUX_SCRIPT: script }, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, 'hello from the installed legion\n');
    assert.ok(readdirSync(join(folder, '.legion', 'runs')).length === 1, 'the run lives in the folder it was started in');
  } finally {
    await tmp.cleanup();
  }
});
