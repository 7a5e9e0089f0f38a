import '../../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { serveRelayedConnections, systemHostProxyDeps, type HostProxyDeps } from '../../../../src/tools/sandbox/host-proxy';
import { isLocalAddress, localAddressSet } from '../../../../src/tools/sandbox/local-address';

// The host-list proxy refuses a listed name that resolves to this machine (docs/sandbox.md#limits):
// the proxy is driven directly, as the relay would (a socket handed over a child's 'message').

let target: Server;
let targetPort = 0;
const received: string[] = [];
before(async () => {
  target = createServer((socket) => {
    received.push('connection');
    socket.on('data', (d) => received.push(d.toString('latin1')));
    socket.end('HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n');
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetPort = (target.address() as { port: number }).port;
});
after(async () => {
  await new Promise((resolve) => target.close(resolve));
});

/** Start the proxy with `allowed` and `deps`, send `request` through it, return what the client got back. */
async function ask(request: string, allowed: readonly string[], deps: HostProxyDeps): Promise<string> {
  const child = new EventEmitter() as unknown as ChildProcess;
  const stop = serveRelayedConnections(child, allowed, deps);
  const front = createServer((socket) => child.emit('message', 'connection', socket));
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise<string>((resolve) => {
      const client: Socket = connect((front.address() as { port: number }).port, '127.0.0.1', () => client.write(request));
      let out = '';
      client.on('data', (d) => { out += d.toString('latin1'); });
      client.on('close', () => resolve(out));
      client.on('error', () => resolve(out));
    });
  } finally {
    stop();
    await new Promise((resolve) => front.close(resolve));
  }
}

/** A resolver that knows only `names`; counts its calls. */
function fakeDeps(names: Record<string, readonly string[]>, connectTo?: (port: number, address: string) => Socket): HostProxyDeps & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    localAddresses: () => ['192.168.7.20', 'fe80::1234'],
    resolve: async (host) => {
      calls.push(host);
      const found = names[host];
      if (!found) throw new Error(`getaddrinfo ENOTFOUND ${host}`);
      return found;
    },
    connect: connectTo ?? ((port, address) => connect(port, address)),
  };
}

test('a listed name resolving to 127.0.0.1 is refused with 403 and the reason; the local server receives nothing (CONNECT and plain HTTP)', async () => {
  received.length = 0;
  const deps = fakeDeps({ 'evil.test': ['127.0.0.1'], 'x.rebind.test': ['203.0.113.5', '::ffff:127.0.0.1'] });
  const tunnel = await ask(`CONNECT evil.test:${targetPort} HTTP/1.1\r\nHost: evil.test\r\n\r\n`, ['evil.test'], deps);
  assert.match(tunnel, /^HTTP\/1\.1 403 Forbidden/);
  assert.match(tunnel, /blocked by the sandbox: host evil\.test resolves to a local address \(127\.0\.0\.1\)/);
  const plain = await ask(`GET http://x.rebind.test:${targetPort}/secret HTTP/1.1\r\nHost: x.rebind.test\r\n\r\n`, ['*.rebind.test'], deps);
  assert.match(plain, /^HTTP\/1\.1 403 Forbidden/);
  assert.match(plain, /host x\.rebind\.test resolves to a local address \(::ffff:127\.0\.0\.1\)/);
  assert.deepEqual(received, []);
});

test('every local kind is refused: loopback, unspecified, link-local and metadata, an interface address, literals too', async () => {
  received.length = 0;
  const cases: Record<string, string> = {
    'a.test': '127.8.9.10', 'b.test': '0.0.0.0', 'c.test': '::', 'd.test': '::1', 'e.test': '169.254.169.254',
    'f.test': 'fe80::1', 'g.test': '192.168.7.20', 'h.test': 'FE80::1234%eth0', 'i.test': '::ffff:7f00:1',
  };
  const deps = fakeDeps(Object.fromEntries(Object.entries(cases).map(([name, address]) => [name, [address]])), () => {
    throw new Error('must not connect');
  });
  for (const [name, address] of Object.entries(cases)) {
    const answer = await ask(`CONNECT ${name}:443 HTTP/1.1\r\n\r\n`, ['*.test'], deps);
    assert.match(answer, /^HTTP\/1\.1 403 Forbidden/, `${name} → ${address}`);
    assert.ok(answer.includes(`resolves to a local address (${address})`), answer);
  }
  const literal = await ask(`CONNECT 127.0.0.1:${targetPort} HTTP/1.1\r\n\r\n`, ['127.0.0.1'], deps);
  assert.match(literal, /403 Forbidden[\s\S]*host 127\.0\.0\.1 resolves to a local address/);
  assert.deepEqual(received, []);
});

test('a remote name: resolved once, connected to the exact address checked (no second resolution); private ranges allowed', async () => {
  received.length = 0;
  const dialed: string[] = [];
  const deps = fakeDeps({ 'registry.test': ['203.0.113.7', '10.1.2.3'], 'corp.test': ['10.20.30.40'] }, (port, address) => {
    dialed.push(`${address}:${port}`);
    return connect(targetPort, '127.0.0.1');
  });
  const answer = await ask(`GET http://registry.test:8080/pkg HTTP/1.1\r\nHost: registry.test\r\nProxy-Authorization: x\r\n\r\n`, ['registry.test', 'corp.test'], deps);
  assert.match(answer, /^HTTP\/1\.1 200 OK[\s\S]*hello/);
  const tunnel = await ask(`CONNECT corp.test:443 HTTP/1.1\r\n\r\n`, ['registry.test', 'corp.test'], deps);
  assert.match(tunnel, /^HTTP\/1\.1 200 Connection Established/);
  assert.deepEqual(dialed, ['203.0.113.7:8080', '10.20.30.40:443']);
  assert.deepEqual(deps.calls, ['registry.test', 'corp.test']);
  assert.ok(received.some((r) => r.startsWith('GET /pkg HTTP/1.1') && !/proxy-authorization/i.test(r)), received.join('|'));
});

test('a name that does not resolve is a 502 with the reason, nothing is dialed', async () => {
  const deps = fakeDeps({}, () => {
    throw new Error('must not connect');
  });
  const answer = await ask(`CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n`, ['nowhere.test'], deps);
  assert.match(answer, /^HTTP\/1\.1 502 Bad Gateway[\s\S]*cannot resolve nowhere\.test: getaddrinfo ENOTFOUND/);
});

test('the system resolver: localhost resolves to loopback and is refused; this machine\'s interface addresses are local', async () => {
  received.length = 0;
  const answer = await ask(`GET http://localhost:${targetPort}/ HTTP/1.1\r\nHost: localhost\r\n\r\n`, ['localhost'], systemHostProxyDeps);
  assert.match(answer, /403 Forbidden[\s\S]*host localhost resolves to a local address/);
  assert.deepEqual(received, []);
  const local = localAddressSet(systemHostProxyDeps);
  for (const address of systemHostProxyDeps.localAddresses()) assert.ok(isLocalAddress(address, local), address);
  for (const remote of ['203.0.113.7', '10.0.0.1', '192.168.1.1', '172.16.0.1', 'fd00::1', '2001:db8::1']) {
    assert.equal(isLocalAddress(remote, new Set()), false, remote);
  }
});
