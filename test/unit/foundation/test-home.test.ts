import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { dirname, join, relative, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { changesBetween, makeTestHome, stampPlaces, superviseRun, verdictOnPlaces, watchedPlaces } from '../../../scripts/test-home.mjs';
import { userConfigDir } from '../../../src/storage/private-mode';
import { trustWorkspace } from '../../helpers/trust';
import { testTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';

/**
 * A test run has a home of its own (docs/development.md#a-home-of-its-own): nothing a test does
 * reaches the folders of the user who runs `npm test` (earlier, each hour of testing added ~100
 * workspaces to the user's trust registry, which every `legion` start reads).
 */
const inside = (root: string, path: string | undefined): boolean => {
  if (!path) return false;
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

test('the runner gives this process a home of its own: HOME (the XDG folders follow it), TMPDIR, tmux, npm and git all point into it', () => {
  const root = process.env.LEGION_TEST_HOME_ROOT;
  assert.ok(root, 'run the tests through scripts/test.mjs (npm test, or node scripts/test.mjs <fragment>): it gives them their own home');
  assert.ok(statSync(root).isDirectory());
  const home = process.env.HOME!;
  for (const name of ['TMPDIR', 'TMUX_TMPDIR']) assert.ok(inside(root, process.env[name]), `${name}=${process.env[name]} is not in the run's folder ${root}`);
  assert.equal(homedir(), home);
  assert.ok(inside(root, tmpdir()));
  // A home outside /tmp, as a real one is (the sandbox gives its commands an empty /tmp), and its own.
  if (existsSync('/var/tmp')) assert.ok(!inside('/tmp', home), home);
  assert.equal(statSync(home).mode & 0o777, 0o700);
  // The account's own home (the passwd entry, where a process without HOME goes) is elsewhere.
  const account = userInfo().homedir;
  assert.ok(!inside(account, home) && !inside(home, account) && !inside(root, account), `the account's home ${account} and the run's ${home} overlap`);
  // Unset, so that they derive from HOME, the run's or one a test gives a process.
  for (const name of ['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'XDG_RUNTIME_DIR', 'LEGION_CACHE_DIR', 'GIT_CONFIG_GLOBAL', 'LEGION_START_WORKSPACE', 'npm_config_cache']) {
    assert.equal(process.env[name], undefined, name);
  }
  // What Legion itself reads: the user's config folder (trust key and registry, config, rules).
  assert.ok(inside(home, userConfigDir(process.env, homedir())));
  // git: its global config is the run's, and commits have an identity.
  const origin = spawnSync('git', ['config', '--global', '--show-origin', 'user.name'], { encoding: 'utf8' });
  assert.equal(origin.status, 0, origin.stderr);
  assert.equal(origin.stdout, `file:${join(home, '.gitconfig')}\tLegion tests\n`);
  assert.equal(spawnSync('git', ['var', 'GIT_COMMITTER_IDENT'], { encoding: 'utf8' }).status, 0);
  // npm: its cache is the run's.
  const cache = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' });
  if (cache.status === 0) assert.ok(inside(home, cache.stdout.trim()), cache.stdout);
});

/** A stand-in for the user who starts a run: a home with Legion's folders as a user has them. */
function fakeUser(dir: string): { env: Record<string, string>; registry: string } {
  const home = join(dir, 'real-home');
  mkdirSync(join(home, '.config', 'legion'), { recursive: true, mode: 0o700 });
  mkdirSync(join(home, '.cache', 'legion'), { recursive: true, mode: 0o700 });
  writeFileSync(join(home, '.config', 'legion', 'config.yaml'), 'version: 1\n', { mode: 0o600 });
  writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Someone\n');
  return { env: { HOME: home, PATH: process.env.PATH ?? '' }, registry: join(home, '.config', 'legion', 'trusted-workspaces.json') };
}

test('hostile: a test that trusts its workspace in the user\'s own folders is caught, by its run\'s folder in the registry; one that uses the run\'s home changes nothing', async (t) => {
  const user = fakeUser(await testTempDir(t));
  const run = makeTestHome(user.env);
  t.after(run.cleanup);
  assert.equal(run.realHome, user.env.HOME);
  const places = watchedPlaces(user.env);
  const before = stampPlaces(places);

  const kept = mkdtempSync(join(run.env.TMPDIR!, 'ws-'));
  mkdirSync(join(kept, '.legion'));
  await trustWorkspace(kept, run.env);
  assert.deepEqual(changesBetween(before, stampPlaces(places), run.markers), { leaked: [], meanwhile: [] }, 'the run\'s own home took it');
  assert.ok(readFileSync(join(run.home, '.config', 'legion', 'trusted-workspaces.json'), 'utf8').includes(kept));

  // A test that builds its environment from the user's (the bug this guards against).
  const leaking = mkdtempSync(join(run.env.TMPDIR!, 'ws-'));
  mkdirSync(join(leaking, '.legion'));
  await trustWorkspace(leaking, user.env);
  const { leaked, meanwhile } = changesBetween(before, stampPlaces(places), run.markers);
  assert.deepEqual(leaked, [`created: ${user.registry}`]);
  // The trust key does not name the run: a change all the same, reported (and failing in CI).
  assert.deepEqual(meanwhile, [`created: ${join(user.env.HOME, '.config', 'legion', 'workspace-trust.key')}`]);
  const verdict = verdictOnPlaces(before, places, run, {});
  assert.equal(verdict.fail, true, 'a leak fails the run, on a workstation too');
  assert.match(verdict.lines.join('\n'), new RegExp(`the run wrote into the user's own folders[^\n]*\n  created: ${user.registry}`));
});

test('the stamps: reading changes nothing; a rewrite, a new mode, a removal and git\'s config removed are each seen', async (t) => {
  const user = fakeUser(await testTempDir(t));
  const places = watchedPlaces(user.env);
  const config = join(user.env.HOME, '.config', 'legion', 'config.yaml');
  const before = stampPlaces(places);
  readFileSync(config);
  assert.deepEqual(changesBetween(before, stampPlaces(places), ['/nowhere']), { leaked: [], meanwhile: [] });

  writeFileSync(config, 'version: 1\n# edited\n');
  chmodSync(join(user.env.HOME, '.cache', 'legion'), 0o755);
  rmSync(join(user.env.HOME, '.gitconfig'));
  assert.deepEqual(changesBetween(before, stampPlaces(places), ['/nowhere']).meanwhile.sort(), [
    `changed: ${join(user.env.HOME, '.cache', 'legion')}`, `changed: ${config}`, `removed: ${join(user.env.HOME, '.gitconfig')}`,
  ].sort());
});

test('the places watched follow the user\'s XDG variables and Legion\'s cache variable, besides the defaults', () => {
  const places = watchedPlaces({ HOME: '/h', XDG_CONFIG_HOME: '/x/config', XDG_CACHE_HOME: '/x/cache', LEGION_CACHE_DIR: '/c', GIT_CONFIG_GLOBAL: '/g' });
  for (const p of ['/h/.config/legion', '/h/.cache/legion', '/h/.local/share/legion', '/h/.local/state/legion', '/h/.gitconfig', '/x/config/legion', '/x/config/git', '/x/cache/legion', '/c', '/g']) {
    assert.ok(places.includes(p), p);
  }
});

test('a change that does not name the run fails it only where nothing else runs (CI, or LEGION_TEST_STRICT_HOME=1); elsewhere it is reported', async (t) => {
  const user = fakeUser(await testTempDir(t));
  const run = makeTestHome(user.env);
  t.after(run.cleanup);
  const places = watchedPlaces(user.env);
  const before = stampPlaces(places);
  writeFileSync(join(user.env.HOME, '.cache', 'legion', 'compile-x-cli.bin'), 'code'); // a legion started beside the run, or the run
  const line = `  created: ${join(user.env.HOME, '.cache', 'legion', 'compile-x-cli.bin')}`;
  for (const [env, fail] of [[{}, false], [{ CI: 'true' }, false], [{ LEGION_TEST_STRICT_HOME: '1' }, true]] as const) {
    const verdict = verdictOnPlaces(before, places, run, env);
    assert.equal(verdict.fail, fail, JSON.stringify(env));
    assert.ok(verdict.lines.includes(line), verdict.lines.join('\n'));
  }
  assert.deepEqual(verdictOnPlaces(stampPlaces(places), places, run, { CI: 'true' }), { fail: false, lines: [] });
});

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SUITES = ['test/unit', 'test/integration', 'test/tui', 'test/e2e'];

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? testFiles(path) : /\.test\.tsx?$/.test(e.name) ? [path] : [];
  });
}

test('every test file imports test/helpers/own-home first, so that one run directly gets a home of its own too', () => {
  const files = SUITES.flatMap((s) => testFiles(join(REPO, s)));
  assert.ok(files.length > 300, `${files.length} test files`);
  const missing = files.filter((file) => {
    const first = /^\s*import\s[^;]*?['"]([^'"]+)['"]/m.exec(readFileSync(file, 'utf8'))?.[1];
    return first === undefined || join(dirname(file), first) !== join(REPO, 'test', 'helpers', 'own-home');
  });
  assert.deepEqual(missing.map((f) => relative(REPO, f)), [], "their first import must be `import '<relative>/helpers/own-home';`");
});

/** A developer's repository with git's variables pointing at it, as a git hook's environment has them. */
function hookRepository(dir: string): Record<string, string> {
  const repo = join(dir, 'developer-repo');
  mkdirSync(repo);
  assert.equal(spawnSync('git', ['init', '-q', repo]).status, 0);
  return { GIT_DIR: join(repo, '.git'), GIT_WORK_TREE: repo, GIT_INDEX_FILE: join(repo, '.git', 'index'), GIT_OBJECT_DIRECTORY: join(repo, '.git', 'objects'), GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'user.name', GIT_CONFIG_VALUE_0: 'Hook' };
}

const commitsIn = (gitDir: string): string => spawnSync('git', ['--git-dir', gitDir, 'log', '--all', '--oneline'], { encoding: 'utf8', env: { PATH: process.env.PATH } }).stdout;

for (const [how, args] of [
  ['node --import tsx --test <file>', ['--import', 'tsx', '--test']],
  ['npx tsx --test <file>', [join(REPO, 'node_modules', 'tsx', 'dist', 'cli.mjs'), '--test']],
] as const) {
  test(`hostile: a test file run directly (${how}), from a git hook, writes nothing into the user's folders or repository; its home is removed`, async (t) => {
    const dir = await testTempDir(t);
    const user = fakeUser(dir);
    const hook = hookRepository(dir);
    const places = watchedPlaces(user.env);
    const before = stampPlaces(places);
    const report = join(dir, 'report.json');
    const run = spawnSync(process.execPath, [...args, join(REPO, 'test', 'fixtures', 'test-home', 'direct-run.ts')], {
      cwd: REPO, encoding: 'utf8', timeout: 120_000, env: { ...user.env, ...hook, LEGION_TEST_REPORT: report },
    });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    const seen = JSON.parse(readFileSync(report, 'utf8')) as { home: string; tmp: string; root: string; ws: string; gitDir: string | null };
    assert.notEqual(seen.home, user.env.HOME);
    assert.ok(inside(seen.root, seen.tmp) && inside(seen.root, seen.ws), JSON.stringify(seen));
    assert.equal(seen.gitDir, null);
    assert.deepEqual(changesBetween(before, stampPlaces(places), [seen.root, seen.home]), { leaked: [], meanwhile: [] });
    assert.equal(commitsIn(hook.GIT_DIR!), '', 'the test\'s commit went into the developer\'s repository');
    assert.ok(!existsSync(seen.home) && !existsSync(seen.root), `left behind: ${seen.home} ${seen.root}`);
  });
}

test('git\'s repository variables (all `git rev-parse --local-env-vars` lists, and the config pairs) do not reach the run', () => {
  const listed = spawnSync('git', ['rev-parse', '--local-env-vars'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  assert.ok(listed.includes('GIT_DIR') && listed.includes('GIT_INDEX_FILE'), listed.join(' '));
  const base = Object.fromEntries([...listed, 'GIT_CONFIG_KEY_0', 'GIT_CONFIG_VALUE_0', 'GIT_CONFIG_KEY_12'].map((n) => [n, '/developer/repo']));
  const run = makeTestHome({ HOME: '/nonexistent-user', PATH: process.env.PATH, ...base });
  try {
    assert.deepEqual(Object.keys(run.env).filter((n) => n in base), []);
  } finally {
    run.cleanup();
  }
});

test('swc unpacks its native binding into the project\'s cache, neither the user\'s nor each run\'s home', async (t) => {
  const user = fakeUser(await testTempDir(t));
  const run = makeTestHome(user.env);
  t.after(run.cleanup);
  const cache = run.env.SWC_NATIVE_BINDING_CACHE!;
  assert.ok(cache && !inside(run.home, cache) && !inside(user.env.HOME, cache) && !inside(run.root, cache), cache);
  assert.equal(statSync(cache).mode & 0o777, 0o700);
  const swc = spawnSync(process.execPath, ['-e', "require('@swc/core').minifySync('var a = 1')"], { cwd: REPO, encoding: 'utf8', env: run.env });
  assert.equal(swc.status, 0, swc.stderr);
  for (const home of [user.env.HOME, run.home]) assert.ok(!existsSync(join(home, '.cache', 'swc-native-0')), `swc unpacked into ${home}`);
  assert.ok(readdirSync(join(cache, 'swc-native-0', 'v1')).some((n) => n.endsWith('.node')));
});

test('the run\'s folders are removed when it ends, or kept (and named) with LEGION_TEST_KEEP_HOME=1: the bench\'s too', async (t) => {
  const user = fakeUser(await testTempDir(t));
  const handlers = process.listenerCount('SIGINT');
  for (const keep of [false, true]) {
    const run = makeTestHome(user.env);
    t.after(run.cleanup);
    const lines: string[] = [];
    const supervisor = superviseRun(run, { env: keep ? { LEGION_TEST_KEEP_HOME: '1' } : {}, log: (l) => void lines.push(l) });
    assert.equal(await supervisor.run(process.execPath, ['-e', 'process.exit(3)'], { env: run.env }), 3);
    supervisor.finish();
    assert.equal(existsSync(run.home) && existsSync(run.root), keep);
    assert.deepEqual(lines, keep ? [`test folders kept: ${run.root} ${run.home}`] : []);
    assert.equal(process.listenerCount('SIGINT'), handlers, 'its signal handlers are removed');
  }
});

for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const) {
  test(`an interrupted run (${signal} to its process group) stops its tests, removes its folders and exits ${code}`, async (t) => {
    const dir = await testTempDir(t);
    const user = fakeUser(dir);
    const report = join(dir, 'report.json');
    const runner = spawn(process.execPath, ['scripts/test.mjs', 'test/fixtures/test-home/sleeps.ts'], {
      cwd: REPO, detached: true, stdio: 'ignore', env: { ...user.env, TMPDIR: dir, LEGION_TEST_REPORT: report },
    });
    const exited = new Promise<number | null>((resolve) => runner.on('exit', (status) => resolve(status)));
    t.after(() => { try { process.kill(-runner.pid!, 'SIGKILL'); } catch { /* gone */ } });
    await until(() => existsSync(report) && readFileSync(report, 'utf8').length > 0, 'the sleeping test started', 120_000);
    const seen = JSON.parse(readFileSync(report, 'utf8')) as { home: string; root: string };
    assert.ok(existsSync(seen.home) && inside(dir, seen.root), JSON.stringify(seen));
    process.kill(-runner.pid!, signal);
    assert.equal(await exited, code);
    assert.ok(!existsSync(seen.home) && !existsSync(seen.root), `left behind: ${seen.home} ${seen.root}`);
  });
}
