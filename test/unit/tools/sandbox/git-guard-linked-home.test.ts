import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withTempDir } from '../../../helpers/tmp';
import { workspaceHooksPaths } from '../../../../src/tools/sandbox/git-guard';

/**
 * The user's git config reaches the workspace through linked folders (a dotfiles repository
 * opened as the workspace): `~/.config` → `<ws>/config` with no `git/config` yet, and
 * `~/.gitconfig` including `~/.gitx/local` with `~/.gitx` → `<ws>/gitx`. Every git the user
 * runs reads `~/.config/git/config` and `~/.gitx/local`; a sandboxed command creating the first
 * or editing the second (a `core.fsmonitor`) ran as the user. Only the top-level files' real
 * paths were guarded, and a missing one was skipped: the guard found nothing.
 */
test('git guard: the user\'s config reached through linked folders is guarded, a file not yet there included', async () => {
  await withTempDir(async (dir) => {
    const base = realpathSync(dir);
    const ws = join(base, 'dot');
    const home = join(base, 'home');
    mkdirSync(join(ws, 'config'), { recursive: true });
    mkdirSync(join(ws, 'gitx'), { recursive: true });
    mkdirSync(home);
    symlinkSync(join(ws, 'config'), join(home, '.config'));
    symlinkSync(join(ws, 'gitx'), join(home, '.gitx'));
    writeFileSync(join(ws, 'gitx', 'local'), '[color]\n\tui = auto\n');
    writeFileSync(join(home, '.gitconfig'), '[include]\n\tpath = ~/.gitx/local\n\tpath = ~/.gitx/later\n');
    const guarded = workspaceHooksPaths(ws, { HOME: home, PATH: process.env.PATH ?? '' });
    for (const path of [join(ws, 'config', 'git', 'config'), join(ws, 'gitx', 'local'), join(ws, 'gitx', 'later')]) {
      assert.ok(guarded.includes(path), `${path} is not guarded: ${JSON.stringify(guarded)}`);
    }
    // The environment is the caller's: an XDG_CONFIG_HOME it names replaces ~/.config.
    const xdg = workspaceHooksPaths(ws, { HOME: home, XDG_CONFIG_HOME: join(home, '.gitx'), PATH: '' });
    assert.ok(xdg.includes(join(ws, 'gitx', 'git', 'config')), JSON.stringify(xdg));
    assert.ok(!xdg.includes(join(ws, 'config', 'git', 'config')), JSON.stringify(xdg));
  });
});
