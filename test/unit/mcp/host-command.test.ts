import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { planServers } from '../../../src/mcp/servers';
import { createTransport } from '../../../src/mcp/transport';

/**
 * A server the user's own configuration defines (`npx -y @x/server-github`, with a token in its
 * env) runs unsandboxed and is never trust-checked: with a folder of the workspace on PATH (an
 * activated .venv/bin, node_modules/.bin under `npx legion`), an `npx` a sandboxed command planted
 * there ran as the user at the next start. Its bare command is looked for outside the workspace.
 */
async function program(path: string, marker: string): Promise<void> {
  await writeFile(path, `#!/bin/sh\n: > "${marker}"\n`, { mode: 0o755 });
}

const until = async (done: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
};

test('a user-level server\'s bare command is never the one planted in a folder of the workspace; a workspace server\'s is as configured', async () => {
  await withTempDir(async (dir) => {
    const ws = join(dir, 'ws');
    const venv = join(ws, '.venv', 'bin');
    const tools = join(dir, 'tools');
    await mkdir(venv, { recursive: true });
    await mkdir(tools);
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
