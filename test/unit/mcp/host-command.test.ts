import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { planServers } from '../../../src/mcp/servers';
import { createTransport } from '../../../src/mcp/transport';
import { hostCommand } from '../../../src/tools/host-path';

/**
 * A server the user's own configuration defines (`npx -y @x/server-github`, with a token in its
 * env) runs unsandboxed and is never trust-checked: with a folder of the workspace on PATH (an
 * activated .venv/bin, node_modules/.bin under `npx legion`), an `npx` a sandboxed command planted
 * there ran as the user at the next start. Its bare command is looked for outside the workspace.
 */
async function program(path: string, marker: string): Promise<void> {
  await writeFile(path, `#!/bin/sh\n: > "${marker}"\n`, { mode: 0o755 });
}

/** A workspace `ws` with an activated-looking `.venv/bin` (writable by a sandboxed command) and a `tools` folder outside it. */
async function venvWorkspace(dir: string): Promise<{ ws: string; venv: string; tools: string }> {
  const ws = join(dir, 'ws');
  const venv = join(ws, '.venv', 'bin');
  const tools = join(dir, 'tools');
  await mkdir(venv, { recursive: true });
  await mkdir(tools);
  return { ws, venv, tools };
}

const until = async (done: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
};

test('a user-level server\'s bare command is never the one planted in a folder of the workspace; a workspace server\'s is as configured', async () => {
  await withTempDir(async (dir) => {
    const { ws, venv, tools } = await venvWorkspace(dir);
    await program(join(venv, 'npx'), join(dir, 'PLANTED-ran'));
    await program(join(tools, 'npx'), join(dir, 'real-ran'));
    await program(join(venv, 'only-here'), join(dir, 'ONLY-HERE-ran'));
    const plan = planServers({
      fromConfig: { github: { command: 'npx', args: ['-y', 'server'], env: { PATH: `${venv}:${tools}` } }, local: { command: 'only-here', env: { PATH: `${venv}:${tools}` } } },
      fromMcpJson: { project: { command: 'npx', env: { PATH: `${venv}:${tools}` } } },
      projectNames: new Set(), env: {}, workspaceRoot: ws, mcpJsonFile: join(ws, '.mcp.json'),
    });
    const spec = (name: string) => plan.servers.find((s) => s.name === name)!.transport;

    const github = createTransport(spec('github'), () => undefined);
    await github.start().catch(() => undefined);
    await until(() => existsSync(join(dir, 'real-ran')));
    await github.close();
    assert.ok(existsSync(join(dir, 'real-ran')), 'the npx outside the workspace ran');
    assert.ok(!existsSync(join(dir, 'PLANTED-ran')), 'the planted npx ran');

    assert.throws(() => createTransport(spec('local'), () => undefined), /"only-here" is not on PATH outside the workspace/);

    // A server the workspace defines starts only once trusted, its files hashed (docs/mcp.md): found as configured.
    const project = createTransport(spec('project'), () => undefined);
    await project.start().catch(() => undefined);
    await until(() => existsSync(join(dir, 'PLANTED-ran')));
    await project.close();
    assert.ok(existsSync(join(dir, 'PLANTED-ran')));
  });
});

/**
 * npm's package runner looks for the package in the project around its working folder first —
 * `node_modules/.bin/<bin>`, `node_modules/<package>` — and reads that project's `.npmrc`
 * (`script-shell` runs the bin through a program of its choosing). A user-level server runs in the
 * workspace, writable by sandboxed commands: `npx -y <package>` (the form docs/mcp.md shows) ran a
 * planted package, or a planted `.npmrc`'s script-shell, as the user at the next start.
 */
for (const [runner, argsOf] of [
  ['npx', (_cache: string) => ['-y', '@legion-test/planted-server']],
  // A global option with its value before `exec`: npm's own form, as a user may write it.
  ['npm', (cache: string) => ['--cache', cache, 'exec', '-y', '@legion-test/planted-server']],
] as const) test(`a user-level ${runner} server resolves its package and npm config outside the workspace (planted node_modules and .npmrc never run)`, { skip: hostCommand(runner, process.env.PATH ?? '', '/nonexistent') === null ? `${runner} is not installed` : false }, async () => {
  await withTempDir(async (dir) => {
    const ws = join(dir, 'ws');
    const pkg = join(ws, 'node_modules', '@legion-test', 'planted-server');
    await mkdir(pkg, { recursive: true });
    await mkdir(join(ws, 'node_modules', '.bin'), { recursive: true });
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: '@legion-test/planted-server', version: '1.0.0', bin: { 'planted-server': 'bin.js' } }));
    await writeFile(join(pkg, 'bin.js'), `#!/usr/bin/env node\nrequire('fs').writeFileSync(${JSON.stringify(join(dir, 'PACKAGE-ran'))}, '')\n`, { mode: 0o755 });
    await symlink('../@legion-test/planted-server/bin.js', join(ws, 'node_modules', '.bin', 'planted-server'));
    await writeFile(join(dir, 'shell.sh'), `#!/bin/sh\n: > "${join(dir, 'SCRIPT-SHELL-ran')}"\nexec /bin/sh "$@"\n`, { mode: 0o755 });
    await writeFile(join(ws, '.npmrc'), `script-shell=${join(dir, 'shell.sh')}\n`);
    const config = join(dir, 'config');
    // Offline: the real package cannot be fetched, so what runs can only come from disk.
    const env = { PATH: process.env.PATH ?? '', npm_config_offline: 'true', npm_config_cache: join(dir, 'npm-cache'), npm_config_update_notifier: 'false' };
    const plan = planServers({
      fromConfig: { tools: { command: runner, args: [...argsOf(join(dir, 'npm-cache'))], env } },
      fromMcpJson: {}, projectNames: new Set(), env: { XDG_CONFIG_HOME: config }, workspaceRoot: ws, mcpJsonFile: join(ws, '.mcp.json'),
    });
    const transport = createTransport(plan.servers[0]!.transport, () => undefined);
    let closed = false;
    transport.onclose = () => { closed = true; };
    await transport.start().catch(() => undefined);
    await until(() => closed || existsSync(join(dir, 'PACKAGE-ran')) || existsSync(join(dir, 'SCRIPT-SHELL-ran')));
    await transport.close();
    assert.ok(!existsSync(join(dir, 'PACKAGE-ran')), 'npx ran the package planted in the workspace');
    assert.ok(!existsSync(join(dir, 'SCRIPT-SHELL-ran')), 'npx ran the script-shell of a .npmrc planted in the workspace');
    assert.ok(closed, 'npx, offline, found no package outside the workspace and exited');
  });
});

/**
 * Finding the server's program outside the workspace is not enough: `npx` starts with
 * `#!/usr/bin/env node` (a Python server with `#!/usr/bin/env python3`), so the interpreter is
 * looked for on the child's PATH. With Legion's PATH passed on, a `node` a sandboxed command
 * planted in an activated `.venv/bin` ran as the user, unsandboxed. The child's PATH is Legion's
 * without the workspace's folders, unless the entry's own `env` sets PATH.
 */
test('a user-level server\'s interpreter (#!/usr/bin/env node) is never one planted in a folder of the workspace on PATH', async () => {
  await withTempDir(async (dir) => {
    const { ws, venv, tools } = await venvWorkspace(dir);
    await program(join(venv, 'node'), join(dir, 'PLANTED-NODE-ran'));
    await writeFile(join(tools, 'server'), `#!/usr/bin/env node\nrequire('fs').writeFileSync(${JSON.stringify(join(dir, 'real-node-ran'))}, '')\n`, { mode: 0o755 });
    const saved = process.env.PATH;
    // Legion's own PATH, as the user's shell left it: the workspace's .venv/bin first.
    process.env.PATH = `${venv}:${tools}:${saved ?? ''}`;
    try {
      const plan = planServers({
        fromConfig: { mine: { command: 'server' }, explicit: { command: 'server', env: { PATH: `${venv}:${tools}` } } },
        fromMcpJson: {}, projectNames: new Set(), env: { XDG_CONFIG_HOME: join(dir, 'config') }, workspaceRoot: ws, mcpJsonFile: join(ws, '.mcp.json'),
      });
      const spec = (name: string) => plan.servers.find((s) => s.name === name)!.transport;
      const mine = createTransport(spec('mine'), () => undefined);
      await mine.start().catch(() => undefined);
      await until(() => existsSync(join(dir, 'real-node-ran')) || existsSync(join(dir, 'PLANTED-NODE-ran')));
      await mine.close();
      assert.ok(!existsSync(join(dir, 'PLANTED-NODE-ran')), 'the node planted in the workspace ran the user\'s server');
      assert.ok(existsSync(join(dir, 'real-node-ran')), 'the node outside the workspace ran it');

      // A PATH the entry sets itself is the user's word: passed on as written.
      const explicit = createTransport(spec('explicit'), () => undefined);
      await explicit.start().catch(() => undefined);
      await until(() => existsSync(join(dir, 'PLANTED-NODE-ran')));
      await explicit.close();
      assert.ok(existsSync(join(dir, 'PLANTED-NODE-ran')));
    } finally {
      process.env.PATH = saved;
    }
  });
});
