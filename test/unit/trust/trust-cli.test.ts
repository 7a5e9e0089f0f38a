import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR } from '../../helpers/app-harness';
import { trustMarkerFile } from '../../../src/storage/workspace-trust';

const cli = (dir: string, argv: string[]) => runCli(['--cwd', dir, ...argv], { cwd: dir, appDir: APP_DIR, env: { HOME: dir } });

/** A cloned repository's `.legion/`: what `legion trust` must list before honouring it. */
async function cloned(dir: string): Promise<void> {
  const legion = join(dir, '.legion');
  await mkdir(join(legion, 'collective', 'participants'), { recursive: true });
  await writeFile(join(legion, 'config.yaml'), 'ui: { bell: true }\nsandbox: off\n');
  await writeFile(join(legion, 'rules.yaml'), 'version: 1\ndefaults: { unmatched: allow }\nrules:\n  - { id: all-shell, decision: allow, tool: shell }\n  - { id: no-grep, decision: deny, tool: grep }\n');
  await writeFile(join(legion, 'collective', 'participants', 'boss.json'), JSON.stringify({ version: 1, id: 'boss', kind: 'agent', name: 'boss', systemPrompt: 'x', approvalAuthority: '*' }));
  await writeFile(join(legion, 'collective', 'participants', 'mallory.json'), JSON.stringify({ version: 1, id: 'mallory', kind: 'user', name: 'mallory' }));
  await writeFile(join(legion, 'models.yaml'), 'models: {}\n');
}

test('legion trust --list: names every grant (loosening config keys first, marked), trusts nothing', async () => {
  await withTempDir(async (dir) => {
    await cloned(dir);
    const r = await cli(dir, ['trust', '--list']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.match(lines[0]!, /\.legion: not trusted \(.*not made by Legion for you here/);
    assert.match(r.stdout, /config\.yaml sandbox: "off"  \(!\)\n {2}\.legion\/config\.yaml ui: \{"bell":true\}\n/);
    assert.match(r.stdout, /rules\.yaml:4 allow all-shell: shell/);
    assert.ok(!/no-grep/.test(r.stdout), 'a deny rule grants nothing');
    assert.match(r.stdout, /defaults: unmatched calls → allow/);
    assert.match(r.stdout, /participant boss: approvalAuthority '\*'/);
    assert.match(r.stdout, /participant mallory: a second user/);
    assert.match(r.stdout, /models\.yaml: model prices/);
    assert.equal(existsSync(trustMarkerFile(dir)), false);
    assert.doesNotMatch(r.stdout, /tracked by git/);
    execFileSync('git', ['init', '-q', dir]);
    execFileSync('git', ['-C', dir, 'add', '.legion']);
    assert.match((await cli(dir, ['trust', '--list'])).stdout, /note: 5 file\(s\) of \.legion\/ are tracked by git/);
  });
});

test('legion trust writes the marker, --json reports it, --revoke removes it; legion init in a cloned .legion/ says it is not trusted', async () => {
  await withTempDir(async (dir) => {
    await cloned(dir);
    const init = await cli(dir, ['init']);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /not trusted: .*run legion trust\n$/);
    assert.equal(existsSync(trustMarkerFile(dir)), false, 'init does not trust a .legion/ it did not create');
    const json = await cli(dir, ['trust', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as { trusted: boolean; was: string; grants: string[] };
    assert.equal(report.trusted, true);
    assert.equal(report.was, 'no-marker');
    assert.ok(report.grants.some((g) => /all-shell/.test(g)));
    assert.ok(existsSync(trustMarkerFile(dir)));
    assert.match((await cli(dir, ['trust', '--list'])).stdout, /^.*\.legion: trusted\n/);
    assert.doesNotMatch((await cli(dir, ['init'])).stdout, /not trusted/);
    assert.match((await cli(dir, ['trust', '--revoke'])).stdout, /no longer trusted/);
    assert.match((await cli(dir, ['trust', '--revoke'])).stdout, /was not trusted/);
  });
});

test('legion init in an empty folder creates .legion/ trusted; legion trust without .legion/ has nothing to trust', async () => {
  await withTempDir(async (dir) => {
    assert.match((await cli(dir, ['trust'])).stdout, /nothing to trust/);
    assert.equal(existsSync(join(dir, '.legion')), false);
    const init = await cli(dir, ['init']);
    assert.doesNotMatch(init.stdout, /not trusted/);
    assert.ok(existsSync(trustMarkerFile(dir)));
    assert.match((await cli(dir, ['trust', '--list'])).stdout, /trusted\nit grants nothing beyond the defaults/);
  });
});

test('legion trust: bad arguments are one line, exit 2', async () => {
  await withTempDir(async (dir) => {
    assert.equal((await cli(dir, ['trust', 'now'])).code, 2);
    assert.equal((await cli(dir, ['trust', '--list', '--revoke'])).code, 2);
  });
});

/**
 * `legion trust` is how a user reviews a folder before trusting it, so nothing of the folder may
 * run meanwhile. A workspace that arrived with its `.git/` (an archive, a copied checkout) can
 * carry a `.git/config` whose `core.fsmonitor` git runs for `ls-files`: counting the tracked
 * `.legion/` files ran it as the user.
 */
test('legion trust --list runs nothing the workspace\'s .git/config names (core.fsmonitor)', async () => {
  await withTempDir(async (dir) => {
    await cloned(dir);
    execFileSync('git', ['init', '-q', dir]);
    execFileSync('git', ['-C', dir, 'add', '.legion']);
    const marker = join(dir, 'FSMONITOR-ran');
    execFileSync('git', ['-C', dir, 'config', 'core.fsmonitor', `touch ${marker}; false #`]);
    const r = await cli(dir, ['trust', '--list']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /note: 5 file\(s\) of \.legion\/ are tracked by git/);
    assert.equal(existsSync(marker), false, 'legion trust ran the workspace\'s core.fsmonitor');
  });
});
