import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hiddenPaths } from '../../../../src/tools/sandbox/hidden-paths';
import { withTempDir } from '../../../helpers/tmp';

// The credentials of tools that keep them under $XDG_CONFIG_HOME are hidden where that points,
// not only under ~/.config (docs/sandbox.md#what-is-hidden: `config/` stands for $XDG_CONFIG_HOME).
test('hidden paths: doctl and the Bitwarden CLI under a custom XDG_CONFIG_HOME are hidden', async () => {
  await withTempDir(async (dir) => {
    const home = join(dir, 'home');
    const xdg = join(dir, 'xdg');
    for (const sub of ['doctl', 'Bitwarden CLI', 'gcloud']) {
      await mkdir(join(xdg, sub), { recursive: true });
      await writeFile(join(xdg, sub, 'secret'), 'x');
    }
    await mkdir(home);
    const hidden = hiddenPaths({ home, xdgConfigHome: xdg, workspaceRoot: join(dir, 'ws'), extra: [] });
    for (const sub of ['doctl', 'Bitwarden CLI', 'gcloud']) assert.ok(hidden.dirs.includes(join(xdg, sub)), `${sub}: ${JSON.stringify(hidden)}`);
  });
});
