import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../helpers/tmp';
import { runCli } from '../helpers/cli';
import { screen } from '../../components/start-tui';
import { startScreen } from '../../src/cli/start-screen';
import type { CommandContext } from '../../src/cli/command';

/** As bin/legion.ts wires it: the CLI composes the run, the screen gets it ready. */
const startTui = (options: { context: CommandContext }): Promise<number> => startScreen(options.context, async () => screen);
import { themeFromEnv } from '../../components/theme';
import { trustWorkspace } from '../helpers/trust';

test('a bad keymap in config stops the start with one line naming it (exit 2), before the screen opens', async () => {
  await withTempDir(async (dir) => {
    await mkdir(join(dir, '.legion'), { recursive: true });
    await writeFile(join(dir, '.legion', 'config.yaml'), 'keymap:\n  help: ctrl+n\n');
    await trustWorkspace(dir, { HOME: dir });
    const r = await runCli(['--cwd', dir], { cwd: dir, isTTY: true, env: { HOME: dir }, startTui });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr, 'legion: keymap: "ctrl+n" is bound to both "newSession" and "help"\n');
    assert.equal(r.stdout, '', 'nothing drawn');
    // The run it composed was closed again: its lock is gone.
    const runs = await readdir(join(dir, '.legion', 'runs'));
    for (const run of runs) assert.ok(!(await readdir(join(dir, '.legion', 'runs', run))).includes('lock'));
  });
});

test('--run and --new together are refused', async () => {
  await withTempDir(async (dir) => {
    const r = await runCli(['--cwd', dir, '--run', 'x', '--new'], { cwd: dir, isTTY: true, env: { HOME: dir }, startTui });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /use either --run <id> or --new, not both/);
  });
});

test('colour and plain mode come from NO_COLOR, FORCE_COLOR=0, --plain, ui.plain and LEGION_SCREEN_READER=1', () => {
  assert.equal(themeFromEnv({}, false, false).color, true);
  assert.equal(themeFromEnv({ NO_COLOR: '1' }, false, false).color, false);
  assert.equal(themeFromEnv({ NO_COLOR: '' }, false, false).color, true, 'an empty NO_COLOR does not count');
  assert.equal(themeFromEnv({ FORCE_COLOR: '0' }, false, false).color, false);
  assert.equal(themeFromEnv({}, false, false).plain, false);
  assert.equal(themeFromEnv({}, true, false).plain, true);
  assert.equal(themeFromEnv({}, false, true).plain, true);
  assert.equal(themeFromEnv({ LEGION_SCREEN_READER: '1' }, false, false).plain, true);
  const plain = themeFromEnv({ LEGION_SCREEN_READER: '1' }, false, false);
  assert.deepEqual(plain.spinner, []);
  assert.equal(plain.arrow, '->');
});
