import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sandboxReachRefusal, type ReachDeps } from '../../../src/engine/sandbox-reach';

/** This machine: a LAN address; names resolve by the table (absent: the lookup fails). */
const machine = (names: Record<string, string[]> = {}): ReachDeps => ({
  localAddresses: () => ['127.0.0.1', '::1', '192.168.1.20', 'fe80::1%eth0'],
  resolve: async (host) => {
    const found = names[host];
    if (!found) throw new Error(`ENOTFOUND ${host}`);
    return found;
  },
});
const hub = (network: 'none' | 'all' | string[], ...engine: string[]) => ({ network, engine, workerHere: false });

test('sandbox reach: network all with an engine on loopback or on this machine is refused, naming the URL and the fix', async () => {
  const local = [
    'http://127.0.0.1:8080', 'http://localhost:8080', 'http://LOCALHOST:1', 'http://engine.localhost:1', 'http://127.1:9070',
    'http://2130706433:9070', 'http://0.0.0.0:9070', 'http://[::1]:9070', 'http://[::]:9070', 'http://[::ffff:127.0.0.1]:1',
    'http://[0:0:0:0:0:0:0:1]:1', 'http://192.168.1.20:8080', 'http://127.9.9.9:1', 'http://0:1', 'http://169.254.3.4:1', 'http://[fe80::9]:1',
  ];
  for (const url of local) {
    const refusal = await sandboxReachRefusal(hub('all', 'http://10.0.0.5:8080', url), machine());
    assert.ok(refusal, `not refused: ${url}`);
    assert.equal(refusal, `sandbox.network: all would let a sandboxed command reach the local engine at ${url} and resolve its own approvals: use network: none or a host list, or run the engine on another host`);
  }
});

test('sandbox reach: a name counts as local unless it resolves, and only to remote addresses (fail-closed)', async () => {
  const deps = machine({ 'engine.corp': ['10.0.0.5', '2001:db8::5'], 'sneaky.example': ['10.0.0.5', '127.0.0.1'], 'mapped.example': ['::ffff:192.168.1.20'], 'empty.example': [] });
  assert.equal(await sandboxReachRefusal(hub('all', 'http://engine.corp:8080', 'https://engine.corp:9070'), deps), undefined);
  for (const url of ['http://sneaky.example:1', 'http://mapped.example:1', 'http://empty.example:1', 'http://unresolvable.example:1']) {
    assert.match((await sandboxReachRefusal(hub('all', url), deps)) ?? '', /reach the local engine at /, url);
  }
  assert.equal(await sandboxReachRefusal(hub('all', 'http://10.0.0.5:8080', 'http://[2001:db8::5]:9070'), deps), undefined);
});

test('sandbox reach: an engine on a unix socket (the local engine) is this machine\'s, without a name lookup', async () => {
  const url = 'http+unix://%2Fhome%2Fu%2Fw%2F.legion%2Fengine%2Fdata%2Flegion%2Fingress.sock';
  const looked: string[] = [];
  const deps = { ...machine({ [url]: ['10.0.0.5'] }), resolve: async (host: string) => { looked.push(host); return ['10.0.0.5']; } };
  assert.match((await sandboxReachRefusal(hub('all', url), deps)) ?? '', /reach the local engine at http\+unix:/);
  assert.deepEqual(looked, []);
});

test('sandbox reach: network none is never refused, the local engine included', async () => {
  assert.equal(await sandboxReachRefusal(hub('none', 'http://127.0.0.1:8080', 'http://127.0.0.1:9070'), machine()), undefined);
  assert.equal(await sandboxReachRefusal({ network: 'none', engine: [], workerHere: true }, machine()), undefined);
});

test('sandbox reach: a host list naming an address of this machine is refused (the proxy would connect to it); remote names pass', async () => {
  for (const host of ['localhost', '127.0.0.1', '127.1', '2130706433', '0', '*.localhost', 'x.localhost', '192.168.1.20']) {
    const refusal = await sandboxReachRefusal(hub(['registry.npmjs.org', host], 'http://10.0.0.5:8080', 'http://10.0.0.5:9070'), machine());
    assert.equal(refusal, `sandbox.network lists ${host}, an address of this machine, which would let a sandboxed command reach the engine at http://10.0.0.5:8080 and resolve its own approvals: list remote hosts only`);
  }
  assert.equal(await sandboxReachRefusal(hub(['registry.npmjs.org', '*.github.com'], 'http://127.0.0.1:8080', 'http://127.0.0.1:9070'), machine()), undefined);
});

test('sandbox reach: a worker with network all is always refused (its feed listens on this machine); a local host in its list too', async () => {
  const all = await sandboxReachRefusal({ network: 'all', engine: [], workerHere: true }, machine());
  assert.equal(all, "sandbox.network: all would let a sandboxed command reach this worker's event feed and the engine's endpoint on this machine and resolve its own approvals: use network: none or a host list");
  assert.match((await sandboxReachRefusal({ network: ['localhost'], engine: [], workerHere: true }, machine())) ?? '', /^sandbox\.network lists localhost, .* reach this worker's event feed/);
  assert.equal(await sandboxReachRefusal({ network: ['registry.npmjs.org'], engine: [], workerHere: true }, machine()), undefined);
});
