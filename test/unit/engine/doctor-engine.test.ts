import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkEngine, checkEngineSandbox } from '../../../src/cli/doctor/engine-check';
import type { WorkspaceTrust } from '../../../src/storage/workspace-trust';

/**
 * `legion doctor` with an engine (docs/engine.md#upgrades-and-versions): a worker registered
 * without `LegionMailbox` (an older version) cannot carry approvals across a chain: said, with
 * what to do. A fake engine answers the admin API and the ingress.
 */
async function fakeEngine(services: string[]): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url === '/deployments') return res.end(JSON.stringify({ deployments: [{ id: 'dp_1', uri: 'http://127.0.0.1:9080/', services: services.map((name) => ({ name })) }] }));
    res.end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const trust = { trusted: true } as unknown as WorkspaceTrust;
const KEY = 'publickeyv1_5BYGELEnryj4UE99cU1PR7WdQ6G5EMsbbikyEHmvi3uN';

test('doctor: an engine of your own without engine.identityKey is a failing line saying what to set (its workers would not start)', async () => {
  const engine = await fakeEngine(['LegionMailbox', 'LegionSession']);
  try {
    const check = await checkEngine({ kind: 'restate', ingress: engine.url, admin: engine.url }, '/nowhere/.legion', trust);
    assert.equal(check.ok, false);
    assert.match(check.detail, /engine\.identityKey is not set/);
    assert.match(check.fix ?? '', /publickeyv1_/);
  } finally {
    engine.server.closeAllConnections();
    await new Promise((r) => engine.server.close(r));
  }
});

test('doctor: a worker of an older version, without LegionMailbox, is reported; one with both services passes', async () => {
  for (const [services, ok] of [[['LegionSession'], false], [['LegionMailbox', 'LegionSession'], true]] as const) {
    const engine = await fakeEngine([...services]);
    try {
      const check = await checkEngine({ kind: 'restate', ingress: engine.url, admin: engine.url, identityKey: KEY }, '/nowhere/.legion', trust);
      assert.equal(check.ok, ok, JSON.stringify(check));
      if (!ok) {
        assert.match(check.detail, /does not serve LegionMailbox \(an older version of Legion\)/);
        assert.match(check.fix ?? '', /replace it with a worker of this version/);
      }
    } finally {
      engine.server.closeAllConnections();
      await new Promise((r) => engine.server.close(r));
    }
  }
});

test('doctor: an engine on loopback with sandbox.network all is a failing line with the fix; network none passes', async () => {
  const settings = { kind: 'restate', ingress: 'http://127.0.0.1:8080', admin: 'http://127.0.0.1:9070' } as const;
  const bad = await checkEngineSandbox(settings, 'all', '/nowhere/.legion', trust);
  assert.equal(bad.ok, false);
  assert.equal(bad.detail, 'sandbox.network: all would let a sandboxed command reach the local engine at http://127.0.0.1:8080 and resolve its own approvals (legion refuses to start)');
  assert.equal(bad.fix, 'use network: none or a host list, or run the engine on another host');
  const listed = await checkEngineSandbox(settings, ['localhost'], '/nowhere/.legion', trust);
  assert.equal(listed.ok, false);
  assert.equal(listed.fix, 'list remote hosts only');
  const good = await checkEngineSandbox(settings, 'none', '/nowhere/.legion', trust);
  assert.equal(good.ok, true, JSON.stringify(good));
});
