import '../../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { once } from 'node:events';
import { join } from 'node:path';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import { createShellSandbox, type ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import { systemHostProxyDeps, type HostProxyDeps } from '../../../../src/tools/sandbox/host-proxy';
import { makeToolContext } from '../../../helpers/tool-context';
import { makeSandboxFixture, realProbe, type SandboxFixture } from '../../../helpers/sandbox-fixture';
import { DEFAULT_SECRET_PATTERNS } from '../../../../src/tools/sandbox/secret-patterns';

// docs/engine.md: the engine resolves approvals for whoever asks its ingress (and registers
// whatever deployment its admin API is given). A local engine listens on this machine; a
// sandboxed command must not reach it: not on loopback, not on this machine's other addresses,
// not through the host-list proxy under a name that resolves here. A stand-in engine counts
// every request; the command tries each way with node's fetch (curl may be absent).
const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;

let fx: SandboxFixture;
let engine: Server;
let port = 0;
const seen: string[] = [];
const machine = Object.values(networkInterfaces()).flatMap((l) => l ?? []).filter((i) => i.family === 'IPv4' && !i.internal).map((i) => i.address);
const hostProxy: HostProxyDeps = { ...systemHostProxyDeps, resolve: async (host) => (host === 'engine.rebind.test' ? ['127.0.0.1'] : host === 'engine.lan.test' && machine[0] ? [machine[0]] : systemHostProxyDeps.resolve(host)) };

before(async () => {
  fx = await makeSandboxFixture();
  engine = createServer((req, res) => { seen.push(`${req.method} ${req.url}`); res.end('{}'); });
  engine.listen(0, '0.0.0.0');
  await once(engine, 'listening');
  port = (engine.address() as { port: number }).port;
});
after(async () => {
  await new Promise((resolve) => engine?.close(resolve));
  await fx?.cleanup();
});

function attempt(url: string, viaProxy: boolean): string {
  const proxy = viaProxy ? 'process.env.HTTP_PROXY' : 'undefined';
  // A POST to the admin API, directly or through the proxy (an absolute-form request).
  return `node -e "
const http = require('node:http');
const target = new URL('${url}');
const p = ${proxy} ? new URL(${proxy}) : null;
const req = http.request(p ? { host: p.hostname, port: p.port, path: target.href, method: 'POST' } : { host: target.hostname, port: target.port, path: '/deployments', method: 'POST' }, (res) => { console.log('STATUS', res.statusCode); res.resume(); });
req.on('error', (e) => console.log('ERROR', e.code));
req.end('{\\"uri\\":\\"http://evil:9080\\"}');
"`;
}

async function run(sandbox: ShellSandbox, command: string): Promise<string> {
  const result = await executeTool(createShellTool({ sandbox, drainMs: 2_000 }), { command }, makeToolContext(fx.ws));
  return result.content;
}

test('network: none — the engine on loopback and on this machine\'s addresses is out of reach', { skip }, async () => {
  const sandbox = createShellSandbox({ hostProxy, settings: { mode: 'on', network: 'none' }, probe, home: fx.home, secretPatterns: DEFAULT_SECRET_PATTERNS, tempDir: tmpdir(), trustedFiles: () => [], env: { HOME: fx.home }, trustRegistry: join(fx.home, '.config', 'legion', 'trusted-workspaces.json') });
  try {
    for (const host of ['127.0.0.1', 'localhost', ...machine]) {
      const out = await run(sandbox, attempt(`http://${host}:${port}/deployments`, false));
      assert.match(out, /ERROR/, `${host}: ${out}`);
    }
    assert.deepEqual(seen, []);
  } finally {
    sandbox.dispose();
  }
});

test('a host list — a listed name resolving to this machine is refused by the proxy; a direct connection has no network', { skip }, async () => {
  const sandbox = createShellSandbox({ hostProxy, settings: { mode: 'on', network: ['engine.rebind.test', 'engine.lan.test'] }, probe, home: fx.home, secretPatterns: DEFAULT_SECRET_PATTERNS, tempDir: tmpdir(), trustedFiles: () => [], env: { HOME: fx.home }, trustRegistry: join(fx.home, '.config', 'legion', 'trusted-workspaces.json') });
  try {
    for (const name of ['engine.rebind.test', ...(machine[0] ? ['engine.lan.test'] : [])]) {
      const out = await run(sandbox, attempt(`http://${name}:${port}/deployments`, true));
      assert.match(out, /STATUS 403/, `${name}: ${out}`);
    }
    const direct = await run(sandbox, attempt(`http://127.0.0.1:${port}/deployments`, false));
    assert.match(direct, /ERROR/);
    assert.deepEqual(seen, []);
  } finally {
    sandbox.dispose();
  }
});

test('the control: unconfined, the same command reaches the stand-in engine', { skip }, async () => {
  const out = await executeTool(createShellTool({ sandbox: 'none', drainMs: 2_000 }), { command: attempt(`http://127.0.0.1:${port}/deployments`, false) }, makeToolContext(fx.ws));
  assert.match(out.content, /STATUS 200/);
  assert.deepEqual(seen.splice(0), ['POST /deployments']);
});
