import '../../../helpers/own-home';
import { join } from 'node:path';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import { createShellSandbox, type ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import { hostAllowed, systemHostProxyDeps, type HostProxyDeps } from '../../../../src/tools/sandbox/host-proxy';
import { connect } from 'node:net';
import type { ToolResult } from '../../../../src/tools/types';
import { makeToolContext } from '../../../helpers/tool-context';
import { makeSandboxFixture, realProbe, type SandboxFixture } from '../../../helpers/sandbox-fixture';
import { DEFAULT_SECRET_PATTERNS } from '../../../../src/tools/sandbox/secret-patterns';

// sandbox.network: [hosts] — only the listed hosts, through Legion's proxy (docs/sandbox.md).
const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;

let fx: SandboxFixture;
let sandbox: ShellSandbox;
let server: Server;
let port = 0;
const seen: string[] = [];
/**
 * This machine's resolver and check, except `registry.test`: a remote address (TEST-NET-3) that the
 * test's connect leads to the local server; and `*.rebind.test`: 127.0.0.1, as `*.nip.io` or a DNS
 * name an attacker controls would answer.
 */
const hostProxy: HostProxyDeps = {
  ...systemHostProxyDeps,
  resolve: async (host) => (host === 'registry.test' ? ['203.0.113.7'] : host.endsWith('.rebind.test') ? ['127.0.0.1'] : systemHostProxyDeps.resolve(host)),
  connect: (to, address) => (address === '203.0.113.7' ? connect(port, '127.0.0.1') : systemHostProxyDeps.connect(to, address)),
};
before(async () => {
  fx = await makeSandboxFixture();
  sandbox = createShellSandbox({ hostProxy, settings: { mode: 'on', network: ['registry.test', 'localhost', '*.rebind.test'] }, probe, home: fx.home, secretPatterns: DEFAULT_SECRET_PATTERNS, tempDir: tmpdir(), trustedFiles: () => [], env: { HOME: fx.home }, trustRegistry: join(fx.home, '.config', 'legion', 'trusted-workspaces.json') });
  server = createServer((req, res) => { seen.push(req.url ?? ''); res.end(`hello ${req.url}\n`); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
after(async () => {
  sandbox?.dispose();
  await new Promise((resolve) => server?.close(resolve));
  await fx?.cleanup();
});

function run(command: string): Promise<ToolResult> {
  return executeTool(createShellTool({ sandbox, drainMs: 2_000 }), { command }, makeToolContext(fx.ws));
}

test('hostAllowed: exact names and *. subdomains, case-insensitive; nothing else', () => {
  assert.ok(hostAllowed('registry.npmjs.org', ['registry.npmjs.org']));
  assert.ok(hostAllowed('API.GitHub.com.', ['*.github.com']));
  assert.equal(hostAllowed('github.com', ['*.github.com']), false);
  assert.equal(hostAllowed('evilgithub.com', ['*.github.com']), false);
  assert.equal(hostAllowed('registry.npmjs.org.evil.net', ['registry.npmjs.org']), false);
});

test('a listed host is reachable through the proxy, plain HTTP and CONNECT', { skip }, async () => {
  const plain = await run(`curl -sS http://registry.test:${port}/plain`);
  assert.equal(plain.isError, undefined, plain.content);
  assert.match(plain.content, /hello \/plain/);
  const tunnel = await run(`curl -sS -p http://registry.test:${port}/tunnel`);
  assert.match(tunnel.content, /hello \/tunnel/);
  assert.deepEqual(seen, ['/plain', '/tunnel']);
});

test('an unlisted host is refused by the proxy and the result says why; going around the proxy finds no network', { skip }, async () => {
  const denied = await run(`curl -sSf -p http://127.0.0.1:${port}/denied`);
  assert.equal(denied.isError, true);
  assert.match(denied.content, /blocked by the sandbox: the host is not in sandbox.network/);
  const direct = await run(`curl -sS --noproxy '*' http://registry.test:${port}/direct`);
  assert.equal(direct.isError, true);
  assert.match(direct.content, /blocked by the sandbox: only the hosts of sandbox.network are reachable/);
  assert.equal(seen.includes('/denied') || seen.includes('/direct'), false);
});

test('a listed name that resolves to this machine (localhost, a *. pattern) is refused by the proxy; the local server receives nothing', { skip }, async () => {
  const plain = await run(`curl -sS http://127.0.0.1.rebind.test:${port}/hostile-sub; curl -sSf http://localhost:${port}/hostile-plain`);
  assert.equal(plain.isError, true);
  assert.match(plain.content, /blocked by the sandbox: host 127\.0\.0\.1\.rebind\.test resolves to a local address \(127\.0\.0\.1\)/);
  assert.match(plain.content, /blocked by the sandbox: the host resolves to an address of this machine/);
  const tunnel = await run(`curl -sSf -p http://localhost:${port}/hostile-tunnel`);
  assert.equal(tunnel.isError, true);
  assert.match(tunnel.content, /response 403|error: 403/);
  assert.match(tunnel.content, /or it resolves to an address of this machine/);
  assert.equal(seen.some((url) => url.startsWith('/hostile')), false, seen.join(' '));
});

test('garbage and oversized proxy requests are refused without reaching anything', { skip }, async () => {
  const script = [
    "const net = require('net'); const [host, port] = new URL(process.env.HTTP_PROXY).host.split(':');",
    "const ask = (text) => new Promise((done) => { const s = net.connect(Number(port), host, () => s.end(text)); let out = ''; s.on('data', (d) => out += d); s.on('close', () => done(out.split('\\r\\n')[0])); s.on('error', () => done('error')); });",
    "(async () => { console.log(await ask('HELLO\\r\\n\\r\\n')); console.log(await ask('GET /relative HTTP/1.1\\r\\n\\r\\n')); console.log(await ask('CONNECT localhost:99999 HTTP/1.1\\r\\n\\r\\n')); console.log(await ask('GET http://localhost/ HTTP/1.1\\r\\nX: ' + 'a'.repeat(20000))); })();",
  ].join('\n');
  const result = await run(`node -e "${script.replace(/"/g, '\\"')}"`);
  assert.equal(result.isError, undefined, result.content);
  assert.deepEqual(result.content.split('\n').slice(0, 4), ['HTTP/1.1 400 Bad Request', 'HTTP/1.1 400 Bad Request', 'HTTP/1.1 400 Bad Request', 'HTTP/1.1 431 Request Header Fields Too Large']);
});
