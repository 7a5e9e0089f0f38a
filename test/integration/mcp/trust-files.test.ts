import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR } from '../../helpers/app-harness';
import { EVERYTHING_BIN } from '../../helpers/mcp-servers';
import { defaultConfigFiles, loadConfig } from '../../../src/config/load';
import { layoutFor } from '../../../src/storage/layout';
import { setupMcp } from '../../../src/mcp/compose-mcp';
import { createMcpManager } from '../../../src/mcp/manager';
import type { EventInput } from '../../../src/events/types';
import { TRUSTED } from '../../../src/storage/workspace-trust';

/**
 * The attack of issue #27 item 6: the user trusts a workspace server `node tools/mcp.js`; an
 * agent (an approved, sandboxed command) rewrites tools/mcp.js; the next start — of a session,
 * of `legion mcp list`, or a restart inside the running session — would run the new script
 * outside the sandbox. Each script appends its name to a marker file: proof of what ran.
 */
interface Workspace { dir: string; home: string; env: Record<string, string>; marker: string }

async function workspace(dir: string): Promise<Workspace> {
  const root = join(dir, 'ws');
  const home = join(dir, 'home');
  await mkdir(join(root, 'tools'), { recursive: true });
  await mkdir(join(home, '.config', 'legion'), { recursive: true });
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const init = await runCli(['init'], { cwd: root, env, appDir: APP_DIR });
  assert.equal(init.code, 0, init.stderr);
  const marker = join(dir, 'ran.txt');
  await writeFile(join(root, '.mcp.json'), JSON.stringify({ mcpServers: { tools: { command: process.execPath, args: ['tools/mcp.js', 'stdio'] } } }));
  await writeScript(root, marker, 'trusted');
  return { dir: await realpath(root), home, env, marker };
}

/** tools/mcp.js: note that `name` ran, then be server-everything (stdio). */
const writeScript = (root: string, marker: string, name: string): Promise<void> =>
  writeFile(join(root, 'tools', 'mcp.js'), `require('node:fs').appendFileSync(${JSON.stringify(marker)}, ${JSON.stringify(name + '\n')});\nimport(${JSON.stringify(pathToFileURL(EVERYTHING_BIN).href)});\n`);

const ran = async (marker: string): Promise<string[]> => (await readFile(marker, 'utf8').catch(() => '')).split('\n').filter(Boolean);

test('a trusted server whose script an agent rewrote is untrusted again: legion mcp list and legion run never start it, and say which file changed', async () => {
  await withTempDir(async (dir) => {
    const ws = await workspace(dir);
    const trusted = await runCli(['mcp', 'trust', 'tools'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.match(trusted.stdout, /pinned to the content of tools\/mcp\.js/);
    const before = await runCli(['mcp', 'list', '--json'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
    assert.equal(JSON.parse(before.stdout).servers[0].state, 'ready', before.stderr);
    assert.deepEqual(await ran(ws.marker), ['trusted']);

    await writeScript(ws.dir, ws.marker, 'agent'); // what the agent's command does

    const listed = await runCli(['mcp', 'list'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^tools {2}untrusted {2}stdio: /m);
    assert.match(listed.stdout, /not started: no longer trusted: tools\/mcp\.js changed since you trusted it/);
    assert.match(listed.stderr, /MCP server "tools" is no longer trusted and did not start: tools\/mcp\.js changed since you trusted it; review it with `legion mcp list`, then `legion mcp trust tools`/);
    const run = await runCli(['run', 'hello'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /tools\/mcp\.js changed since you trusted it/);
    assert.deepEqual(await ran(ws.marker), ['trusted'], 'the rewritten script never ran');

    // A new file the definition names (a second script argument appearing) is refused the same way.
    const again = await runCli(['mcp', 'trust', 'tools'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
    assert.equal(again.code, 0, again.stderr);
    const after = await runCli(['mcp', 'list', '--json'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
    assert.equal(JSON.parse(after.stdout).servers[0].state, 'ready', 'trusting again, after review, starts it');
    assert.deepEqual(await ran(ws.marker), ['trusted', 'agent']);
  });
});

test('inside a running session: a script rewritten after the start is refused at the restart, with the reason as the failure', async () => {
  await withTempDir(async (dir) => {
    const ws = await workspace(dir);
    assert.equal((await runCli(['mcp', 'trust', 'tools'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR })).code, 0);
    const loaded = await loadConfig(defaultConfigFiles(APP_DIR, ws.dir, ws.home, TRUSTED));
    assert.ok(loaded.ok);
    const layout = layoutFor(ws.dir);
    const setup = await setupMcp({ config: loaded.config, layout, env: ws.env });
    assert.deepEqual([...setup.untrusted], []);
    const events: EventInput[] = [];
    const manager = createMcpManager({
      servers: setup.servers, untrusted: setup.untrusted, verify: setup.verify, legionDir: layout.legionDir, clientVersion: 'test',
      reservedNames: new Set(), emit: (e) => events.push(e), secrets: [], canAskUser: false,
      backoff: { baseMs: 50, maxMs: 50, maxAttempts: 3 },
    });
    try {
      manager.start();
      await manager.settled();
      assert.equal(manager.statuses()[0]!.state, 'ready');
      await writeScript(ws.dir, ws.marker, 'agent');
      // The server dies (a crash the agent provoked, or a kill): Legion restarts it with backoff.
      const pid = Number((await readFile(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')).trim().split(/\s+/).at(-1));
      assert.ok(pid > 0);
      process.kill(pid, 'SIGKILL');
      const end = Date.now() + 20_000;
      while (!events.some((e) => e.type === 'mcp-status' && e.state === 'failed' && /changed since you trusted it/.test(e.error ?? ''))) {
        assert.ok(Date.now() < end, `no refusal: ${JSON.stringify(events.filter((e) => e.type === 'mcp-status'))}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      // Every retry is refused the same way; nothing new ran.
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(await ran(ws.marker), ['trusted']);
      assert.match(manager.statuses()[0]!.error ?? '', /MCP server "tools" is no longer trusted and did not start: tools\/mcp\.js changed since you trusted it/);
    } finally {
      await manager.close();
    }
  });
});
