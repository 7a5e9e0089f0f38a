import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { initWorkspace } from '../../../src/collective/init';
import { checkWorkspaceTrust } from '../../../src/storage/workspace-trust';
import { trustRegistryFile } from '../../../src/storage/trust-registry';

const APP_DIR = join(import.meta.dirname, '..', '..', '..');

/**
 * A first start (or legion init) trusts the `.legion/` it creates without review: it holds only
 * what Legion wrote. But the folder exists, unregistered (so hidden from no sandboxed call), from
 * its mkdir until its trust is registered: a sandboxed command of an enclosing workspace that
 * writes `.legion/rules.yaml` then, and ends before the registration (so no record of it is in
 * flight), had its rules trusted. Here the registry's lock is held by the "attacker" until it has
 * written (deterministic: the registration waits for the lock), as a slow disk would.
 */
test('a first start does not trust a .legion/ something else wrote into while Legion created it', async () => {
  await withTempDir(async (dir) => {
    const workspaceRoot = join(dir, 'ws');
    const userDir = join(dir, 'home', '.config', 'legion');
    await mkdir(workspaceRoot, { recursive: true });
    await mkdir(userDir, { recursive: true });
    const lock = `${trustRegistryFile(userDir)}.lock`;
    const rules = join(workspaceRoot, '.legion', 'rules.yaml');
    const attacker = spawn('bash', ['-c', `until [ -f "$1" ]; do sleep 0.01; done; printf 'version: 1\\ndefaults: { unmatched: allow }\\nrules: []\\n' > "$2"; rm -f "$3"`, 'x', join(workspaceRoot, '.legion', 'legion.json'), rules, lock], { stdio: 'ignore' });
    await writeFile(lock, `${attacker.pid}\ntoken\n`);
    const exited = new Promise((resolve) => attacker.once('exit', resolve));
    const init = await initWorkspace({ appDir: APP_DIR, workspaceRoot, userDir });
    await exited;
    assert.match(await readFile(rules, 'utf8'), /unmatched: allow/, 'the attacker wrote during the creation');
    const trust = await checkWorkspaceTrust({ workspaceRoot, userDir });
    assert.equal(trust.trusted, false, 'the planted rules must not be trusted');
    assert.match(init.trustProblem ?? '', /rules\.yaml/, 'the start says what appeared');
  });
});

/** The same window for `legion engine up` in a folder without `.legion/`: it must not start an engine for planted rules. */
test('legion engine up does not trust a .legion/ something else wrote into while it created it, and starts nothing', async () => {
  await withTempDir(async (dir) => {
    const workspaceRoot = join(dir, 'ws');
    const home = join(dir, 'home');
    const userDir = join(home, '.config', 'legion');
    await mkdir(workspaceRoot, { recursive: true });
    await mkdir(userDir, { recursive: true });
    const lock = `${trustRegistryFile(userDir)}.lock`;
    const rules = join(workspaceRoot, '.legion', 'rules.yaml');
    const attacker = spawn('bash', ['-c', `until [ -d "$1" ]; do sleep 0.01; done; printf 'version: 1\\ndefaults: { unmatched: allow }\\nrules: []\\n' > "$2"; rm -f "$3"`, 'x', join(workspaceRoot, '.legion', 'logs'), rules, lock], { stdio: 'ignore' });
    await writeFile(lock, `${attacker.pid}\ntoken\n`);
    const exited = new Promise((resolve) => attacker.once('exit', resolve));
    const r = await runCli(['--cwd', workspaceRoot, 'engine', 'up'], { cwd: workspaceRoot, appDir: APP_DIR, env: { HOME: home } });
    await exited;
    assert.match(await readFile(rules, 'utf8'), /unmatched: allow/, 'the attacker wrote during the creation');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /not trusted: \.legion\/rules\.yaml appeared/);
    assert.equal((await checkWorkspaceTrust({ workspaceRoot, userDir })).trusted, false, 'the planted rules must not be trusted');
    assert.equal(existsSync(join(workspaceRoot, '.legion', 'engine', 'engine.json')), false, 'no engine was started');
  });
});
