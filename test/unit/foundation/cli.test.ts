import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { VERSION } from '../../../src/cli/main';
import { layoutFor, WORKSPACE_VERSION } from '../../../src/storage/layout';
import { createParticipantStore } from '../../../src/collective/store';
import { TRUSTED } from '../../../src/storage/workspace-trust';

const DEFAULT_IDS = ['resource-agent', 'ur-agent', 'user'];

/** Exactly one line on stderr, starting with "legion: ". */
function assertOneLine(stderr: string): void {
  assert.match(stderr, /^legion: [^\n]+\n$/, JSON.stringify(stderr));
}

test('cli: --help lists the commands and global flags; exit 0, nothing on stderr', async () => {
  for (const argv of [['--help'], ['-h'], ['init', '--help']]) {
    const r = await runCli(argv, { cwd: '/' });
    assert.equal(r.code, 0);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /legion init/);
    assert.match(r.stdout, /--cwd <dir>/);
  }
  const all = await runCli(['--help'], { cwd: '/' });
  assert.match(all.stdout, /^Legion: /);
  assert.match(all.stdout, /LEGION_DEBUG=1/);
  const one = await runCli(['init', '--help'], { cwd: '/' });
  assert.match(one.stdout, /^usage: legion init \[--force\]/);
});

test('cli: --version prints the package version', async () => {
  const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
  assert.equal(VERSION, pkg.version);
  for (const flag of ['--version', '-v']) {
    const r = await runCli([flag], { cwd: '/' });
    assert.deepEqual(r, { code: 0, stdout: `legion ${pkg.version}\n`, stderr: '' });
  }
});

test('cli: an unknown command is one line and exit 2', async () => {
  const r = await runCli(['frobnicate'], { cwd: '/' });
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, 'legion: unknown command "frobnicate" (see legion --help)\n');
});

test('cli: unknown flags, missing values and values on booleans are one line and exit 2', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['init', '--frob'], /unknown flag "--frob" for "init"/],
    [['--frob'], /unknown flag "--frob"/],
    [['-x'], /unknown flag "-x"/],
    [['init', '--cwd'], /flag "--cwd" needs a value/],
    [['init', '--force=yes'], /flag "--force" takes no value/],
  ];
  for (const [argv, pattern] of cases) {
    const r = await runCli(argv, { cwd: '/' });
    assert.equal(r.code, 2, argv.join(' '));
    assertOneLine(r.stderr);
    assert.match(r.stderr, pattern);
  }
});

test('cli: --cwd to a missing folder or a file is one line, exit 2', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'file'), 'x');
    for (const target of ['file', 'missing']) {
      const r = await runCli(['init', '--cwd', target], { cwd: dir });
      assert.equal(r.code, 2);
      assert.equal(r.stderr, `legion: --cwd ${target}: not a directory\n`);
    }
    assert.deepEqual((await readdir(dir)).sort(), ['file'], 'nothing created');
  });
});

test('cli: init in an empty folder creates .legion/ with the default collective', async () => {
  await withTempDir(async (dir) => {
    const r = await runCli(['init'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^created .*\.legion\n/);
    for (const id of DEFAULT_IDS) assert.match(r.stdout, new RegExp(`added ${id}`));
    const layout = layoutFor(dir);
    assert.deepEqual((await readdir(layout.participantsDir)).sort(), DEFAULT_IDS.map((id) => `${id}.json`));
    const participants = await createParticipantStore(layout).loadAll(TRUSTED);
    const byId = new Map(participants.map((p) => [p.id, p]));
    assert.equal(byId.get('user')?.kind, 'user');
    assert.equal(byId.get('user')?.approvalAuthority, '*');
    const ur = byId.get('ur-agent');
    assert.ok(ur && ur.kind === 'agent' && ur.tools.includes('communicator'));
    const ra = byId.get('resource-agent');
    assert.ok(ra && ra.kind === 'agent' && ra.tools.includes('spawn_agent'));
    assert.equal(JSON.parse(await readFile(layout.marker, 'utf8')).version, WORKSPACE_VERSION);
  });
});

test('cli: init is idempotent and keeps a modified participant; --force resets it', async () => {
  await withTempDir(async (dir) => {
    assert.equal((await runCli(['init'], { cwd: dir })).code, 0);
    const file = layoutFor(dir).participant('ur-agent');
    const modified = { ...JSON.parse(await readFile(file, 'utf8')), systemPrompt: 'my own prompt' };
    await writeFile(file, JSON.stringify(modified));
    // A participant the user added survives both.
    const scribe = { version: 1, id: 'scribe', kind: 'agent', name: 'Scribe', systemPrompt: 'write docs', tools: ['file_read'] };
    await writeFile(layoutFor(dir).participant('scribe'), JSON.stringify(scribe));

    const again = await runCli(['init'], { cwd: dir });
    assert.equal(again.code, 0);
    assert.match(again.stdout, /is ready \(collective unchanged; --force resets the default participants\)/);
    assert.equal(JSON.parse(await readFile(file, 'utf8')).systemPrompt, 'my own prompt');

    const forced = await runCli(['init', '--force'], { cwd: dir });
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /^updated /);
    assert.match(forced.stdout, /reset ur-agent/);
    assert.notEqual(JSON.parse(await readFile(file, 'utf8')).systemPrompt, 'my own prompt');
    assert.deepEqual(JSON.parse(await readFile(layoutFor(dir).participant('scribe'), 'utf8')), scribe);
  });
});

test('cli: --cwd points init at another folder (relative to the cwd)', async () => {
  await withTempDir(async (dir) => {
    await mkdir(join(dir, 'project'));
    const r = await runCli(['--cwd', 'project', 'init'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await readdir(dir), ['project']);
    assert.equal((await readdir(layoutFor(join(dir, 'project')).participantsDir)).length, 3);
  });
});

test('cli: a .legion/ from a newer version is one line, exit 1, and is left alone', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    await mkdir(layout.legionDir);
    const marker = JSON.stringify({ version: WORKSPACE_VERSION + 1 });
    await writeFile(layout.marker, marker);
    const r = await runCli(['init'], { cwd: dir });
    assert.equal(r.code, 1);
    assertOneLine(r.stderr);
    assert.match(r.stderr, /made by a newer Legion .*upgrade Legion/);
    assert.deepEqual(await readdir(layout.legionDir), ['legion.json']);
    assert.equal(await readFile(layout.marker, 'utf8'), marker);
  });
});

test('cli: a half-written participant file is one line naming the file; nothing is overwritten', async () => {
  await withTempDir(async (dir) => {
    assert.equal((await runCli(['init'], { cwd: dir })).code, 0);
    const file = layoutFor(dir).participant('ur-agent');
    const full = await readFile(file, 'utf8');
    const half = full.slice(0, Math.floor(full.length / 2));
    await writeFile(file, half);
    const r = await runCli(['init'], { cwd: dir });
    assert.equal(r.code, 1);
    assertOneLine(r.stderr);
    assert.ok(r.stderr.startsWith(`legion: ${file}: not valid JSON`), r.stderr);
    assert.match(r.stderr, /legion init --force/);
    assert.equal(await readFile(file, 'utf8'), half);
    // A participant file with a wrong shape names the file and the key.
    await writeFile(file, JSON.stringify({ ...JSON.parse(full), tools: 'all' }));
    const shape = await runCli(['init'], { cwd: dir });
    assert.equal(shape.code, 1);
    assertOneLine(shape.stderr);
    assert.ok(shape.stderr.startsWith(`legion: ${file}: tools: `), shape.stderr);
    // --force recovers.
    assert.equal((await runCli(['init', '--force'], { cwd: dir })).code, 0);
    assert.equal(await readFile(file, 'utf8'), full);
  });
});

test('cli: LEGION_DEBUG=1 adds the stack after the one line', async () => {
  await withTempDir(async (dir) => {
    await mkdir(join(dir, '.legion'));
    await writeFile(join(dir, '.legion', 'legion.json'), '{"vers');
    const plain = await runCli(['init'], { cwd: dir });
    assertOneLine(plain.stderr);
    const debug = await runCli(['init'], { cwd: dir, env: { LEGION_DEBUG: '1' } });
    assert.equal(debug.code, 1);
    const [first, ...rest] = debug.stderr.split('\n');
    assert.equal(first + '\n', plain.stderr);
    assert.match(rest.join('\n'), /LegionError: .*\n\s+at /);
  });
});

test('cli: start without a TUI, or without a terminal, is one clear line', async () => {
  const none = await runCli([], { cwd: '/' });
  assert.equal(none.code, 1);
  assert.equal(none.stderr, 'legion: the TUI is not available in this build\n');
  let called = false;
  const startTui = async () => { called = true; return 0; };
  const noTty = await runCli(['start'], { cwd: '/', startTui });
  assert.equal(noTty.code, 2);
  assertOneLine(noTty.stderr);
  assert.match(noTty.stderr, /needs a terminal/);
  assert.equal(called, false);
  const tty = await runCli([], { cwd: '/', startTui, isTTY: true });
  assert.equal(tty.code, 0);
  assert.equal(called, true);
});

test('cli: an unexpected error (not a LegionError) is still one line, exit 1', async () => {
  const r = await runCli([], { cwd: '/', isTTY: true, startTui: async () => { throw new TypeError('boom\nsecond line'); } });
  assert.equal(r.code, 1);
  assert.equal(r.stderr, 'legion: boom\n');
});
