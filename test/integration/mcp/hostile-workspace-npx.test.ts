import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR } from '../../helpers/app-harness';
import { hostCommand } from '../../../src/tools/host-path';

/**
 * A workspace server the user trusted with the command docs/mcp.md shows, `npx -y <package>`:
 * trust pins the definition and the workspace files it names, none here. npm's package runner
 * looks in the project around its working folder (the workspace) first — `node_modules/<package>`,
 * `node_modules/.bin` — and reads its `.npmrc` (`script-shell`), all of which a sandboxed command
 * (or a file tool) may write. So an agent planting a package of that name made the next
 * `legion mcp list` (or session start, or the server's restart) run its code as the user,
 * outside the sandbox, the definition still trusted. npm's project is the user's config folder
 * for workspace servers too, as for the user's own (docs/mcp.md#trust).
 */
test('a trusted workspace server `npx -y <package>` never runs a package or .npmrc planted in the workspace', { skip: hostCommand('npx', process.env.PATH ?? '', '/nonexistent') === null ? 'npx is not installed' : false }, async () => {
  await withTempDir(async (dir) => {
    const root = join(dir, 'ws');
    const home = join(dir, 'home');
    await mkdir(root, { recursive: true });
    await mkdir(join(home, '.config', 'legion'), { recursive: true });
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), PATH: process.env.PATH ?? '/usr/bin:/bin' };
    assert.equal((await runCli(['init'], { cwd: root, env, appDir: APP_DIR })).code, 0);
    // Offline, with a cache of its own: the real package cannot be fetched, so what runs can only come from disk.
    const npmEnv = { npm_config_offline: 'true', npm_config_cache: join(dir, 'npm-cache'), npm_config_update_notifier: 'false' };
    await writeFile(join(root, '.mcp.json'), JSON.stringify({ mcpServers: { tools: { command: 'npx', args: ['-y', '@legion-test/planted-server'], env: npmEnv } } }));
    const ws = await realpath(root);
    const trusted = await runCli(['mcp', 'trust', 'tools'], { cwd: ws, env, appDir: APP_DIR });
    assert.equal(trusted.code, 0, trusted.stderr);

    // What the agent's command does: a package of that name, and an .npmrc whose script-shell runs first.
    const pkg = join(ws, 'node_modules', '@legion-test', 'planted-server');
    await mkdir(pkg, { recursive: true });
    await mkdir(join(ws, 'node_modules', '.bin'), { recursive: true });
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: '@legion-test/planted-server', version: '1.0.0', bin: { 'planted-server': 'bin.js' } }));
    await writeFile(join(pkg, 'bin.js'), `#!/usr/bin/env node\nrequire('fs').writeFileSync(${JSON.stringify(join(dir, 'PACKAGE-ran'))}, '')\n`, { mode: 0o755 });
    await symlink('../@legion-test/planted-server/bin.js', join(ws, 'node_modules', '.bin', 'planted-server'));
    await writeFile(join(dir, 'shell.sh'), `#!/bin/sh\n: > "${join(dir, 'SCRIPT-SHELL-ran')}"\nexec /bin/sh "$@"\n`, { mode: 0o755 });
    await writeFile(join(ws, '.npmrc'), `script-shell=${join(dir, 'shell.sh')}\n`);

    const listed = await runCli(['mcp', 'list', '--json'], { cwd: ws, env, appDir: APP_DIR });
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(!existsSync(join(dir, 'PACKAGE-ran')), 'npx ran the package planted in the workspace, as the user');
    assert.ok(!existsSync(join(dir, 'SCRIPT-SHELL-ran')), 'npx ran the script-shell of a .npmrc planted in the workspace');
    assert.notEqual(JSON.parse(listed.stdout).servers[0].state, 'ready', 'offline, npx found no package outside the workspace');
  });
});
