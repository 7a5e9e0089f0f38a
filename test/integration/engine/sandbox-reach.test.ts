import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { realpathSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { composeApp } from '../../../src/cli/compose';
import type { CommandContext } from '../../../src/cli/command';
import { startAppHarness, APP_DIR } from '../../helpers/app-harness';
import { trustWorkspace } from '../../helpers/trust';
import { withTempDir } from '../../helpers/tmp';

/** A stand-in for a local engine on loopback: counts every request it is sent (an attacker's or Legion's). */
async function fakeEngine(): Promise<{ url: string; requests: string[]; server: Server }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end(req.url?.startsWith('/deployments') ? '{"deployments":[]}' : '{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { url: `http://127.0.0.1:${address.port}`, requests, server };
}

test('engine on loopback + sandbox.network all: the start is refused in one line before anything reaches the engine or a command runs', async () => {
  const engine = await fakeEngine();
  try {
    await withTempDir(async (dir) => {
      for (const network of ['all', ['localhost'], ['127.0.0.1']] as const) {
        const start = startAppHarness({ dir, config: { engine: { kind: 'restate', ingress: engine.url, admin: engine.url }, sandbox: { network } } });
        await assert.rejects(start, (error: Error) => {
          assert.ok(!error.message.includes('\n'), error.message);
          assert.match(error.message, network === 'all'
            ? new RegExp(`^sandbox\\.network: all would let a sandboxed command reach the local engine at ${engine.url} and resolve its own approvals: use network: none or a host list, or run the engine on another host$`)
            : /^sandbox\.network lists (localhost|127\.0\.0\.1), an address of this machine, .*: list remote hosts only$/);
          return true;
        });
      }
    });
    assert.deepEqual(engine.requests, [], 'refused before the engine was even asked for its health');
  } finally {
    engine.server.close();
  }
});

test('engine on loopback + sandbox.network none: the check lets it through to the engine', async () => {
  const engine = await fakeEngine();
  try {
    await withTempDir(async (dir) => {
      // The fake engine answers health but is no Restate: whatever the hub does next may fail; the sandbox check must not.
      const outcome = await startAppHarness({ dir, config: { engine: { kind: 'restate', ingress: engine.url, admin: engine.url }, sandbox: { network: 'none' } } })
        .then(async (app) => { await app.close(); return undefined; }, (error: Error) => error.message);
      assert.ok(outcome === undefined || !/sandbox\.network/.test(outcome), outcome);
    });
    assert.ok(engine.requests.some((r) => r.endsWith('/health')), `the engine was reached: ${engine.requests.join(', ')}`);
  } finally {
    engine.server.close();
  }
});

test("a worker's core with sandbox.network all is refused whatever the engine's URLs (its own feed listens on this machine)", async () => {
  await withTempDir(async (dir) => {
    const root = realpathSync(dir);
    const home = join(root, '.legion', 'test-home');
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileSync(join(root, '.legion', 'config.yaml'), JSON.stringify({ engine: { kind: 'restate', ingress: 'http://10.255.255.1:8080', admin: 'http://10.255.255.1:9070' }, sandbox: { network: 'all' } }), { mode: 0o600 });
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), PATH: process.env.PATH, LEGION_TEST: '1' };
    await trustWorkspace(root, env);
    const context: CommandContext = {
      args: { command: 'worker', positionals: [], flags: new Map(), global: { help: false, version: false, plain: false } },
      io: { stdout: () => {}, stderr: () => {}, cwd: root, isTTY: false, env },
      appDir: APP_DIR,
      workspaceRoot: root,
    };
    const never = (): never => { throw new Error('the worker core was built: the refusal came too late'); };
    const worker = { wrapTurn: never, wrapExecute: never, delegate: never, step: never, across: never, runTotals: never } as unknown as NonNullable<NonNullable<Parameters<typeof composeApp>[1]>['worker']>;
    await assert.rejects(composeApp(context, { worker }), /^LegionError: sandbox\.network: all would let a sandboxed command reach this worker's event feed/);
  });
});
