import '../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventInput } from '../../../src/events/types';
import { createMcpManager, type McpManager } from '../../../src/mcp/manager';
import type { McpServerSpec } from '../../../src/mcp/servers';
import { executeTool } from '../../../src/tools/execute-tool';
import { makeTempDir, type TempDir } from '../../helpers/tmp';
import { makeToolContext } from '../../helpers/tool-context';
import { EVERYTHING_BIN, everythingStdio, startEverythingHttp, stdioSpec } from '../../helpers/mcp-servers';

/**
 * Servers that die while Legion holds a "ready" connection (docs/mcp.md, Lifecycle): the real
 * server-everything, killed with SIGKILL mid-call and while idle, over streamable HTTP (where
 * nothing closes on the client's side) and over stdio. Each call's timeout is ten minutes, so
 * a call that hung until its timeout would fail the test by the test's own limit instead.
 */
let temp: TempDir;
before(async () => { temp = await makeTempDir('legion-mcp-dead-'); });
after(async () => { await temp?.cleanup(); });

const waitFor = async (check: () => boolean, what: string, ms = 30_000): Promise<void> => {
  const end = Date.now() + ms; // a safety net only: every wait ends on an event well before
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

const NEVER = 600_000;
const httpSpec = (url: string, extra: Partial<McpServerSpec> = {}): McpServerSpec =>
  ({ ...everythingStdio({ timeoutMs: NEVER, ...extra }), transport: { kind: 'http', url, headers: {} } });

function manager(spec: McpServerSpec, events: EventInput[], maxAttempts = 3): McpManager {
  return createMcpManager({
    servers: [spec], untrusted: new Set(), verify: async () => null, legionDir: join(temp.dir, '.legion'), clientVersion: '0.0.0-test',
    reservedNames: new Set(), emit: (e) => events.push(e), secrets: [], canAskUser: false,
    backoff: { baseMs: 50, maxMs: 200, maxAttempts },
  });
}

const state = (m: McpManager): string => m.statuses()[0]!.state;
const tool = (m: McpManager, name: string) => {
  const found = m.tools().find((t) => t.name === name);
  assert.ok(found, `${name} in ${m.tools().map((t) => t.name).join(', ')}`);
  return found;
};
const portOf = (url: string): number => Number(new URL(url).port);

test('streamable HTTP: the server killed mid-call ends the call with an error at once, is marked failed, and comes back on the next use', { timeout: 120_000 }, async () => {
  let server = await startEverythingHttp();
  const events: EventInput[] = [];
  const m = manager(httpSpec(server.url, { pingIntervalMs: 0 }), events);
  m.start();
  await m.settled();
  try {
    assert.equal(state(m), 'ready');
    const call = executeTool(tool(m, 'mcp__everything__trigger-long-running-operation'), { duration: 60, steps: 60 }, makeToolContext(temp.dir, { toolUseId: 'tu-http' }));
    await waitFor(() => events.some((e) => e.type === 'tool-progress' && e.toolUseId === 'tu-http'), 'progress');
    await server.stop();
    const result = await call;
    assert.equal(result.isError, true);
    assert.match(result.content, /MCP server "everything" (stopped during the call|is unreachable)/);
    await waitFor(() => events.some((e) => e.type === 'mcp-status' && e.state === 'failed'), 'the failed status');
    assert.ok(events.some((e) => e.type === 'notice' && e.level === 'warn' && /MCP server "everything" failed/.test(e.message)));

    // Down for good (it gives up after 3 attempts): a call answers with an error, no hang.
    await waitFor(() => /gave up after 3 attempts/.test(m.statuses()[0]!.error ?? ''), 'giving up');
    const down = await executeTool(tool(m, 'mcp__everything__echo'), { message: 'anyone?' }, makeToolContext(temp.dir));
    assert.equal(down.isError, true);
    assert.match(down.content, /MCP server "everything" is not available \(failed: .*(fetch failed|ECONNREFUSED)/);

    // The server is back where it was: the next use reconnects.
    server = await startEverythingHttp(portOf(server.url));
    await new Promise((r) => setTimeout(r, 60)); // past backoff.baseMs since the last attempt
    const echo = await executeTool(tool(m, 'mcp__everything__echo'), { message: 'back' }, makeToolContext(temp.dir));
    assert.equal(echo.content, 'Echo: back');
    assert.equal(state(m), 'ready');
    assert.ok(events.some((e) => e.type === 'notice' && /MCP server "everything" is back/.test(e.message)));
  } finally {
    await m.close();
    await server.stop();
  }
});

test('streamable HTTP: a server that dies while idle is noticed without any call and restarts in the background', { timeout: 120_000 }, async () => {
  let server = await startEverythingHttp();
  const events: EventInput[] = [];
  const m = manager(httpSpec(server.url, { pingIntervalMs: 100 }), events, 50);
  m.start();
  await m.settled();
  try {
    assert.equal(state(m), 'ready');
    await server.stop();
    await waitFor(() => state(m) === 'failed' || state(m) === 'starting', 'the idle server noticed as dead');
    assert.ok(events.some((e) => e.type === 'notice' && /MCP server "everything" failed/.test(e.message)));
    const log = await readFile(join(temp.dir, '.legion/logs/mcp-everything.log'), 'utf8');
    assert.match(log, /failed: (not answering|unreachable)/);
    server = await startEverythingHttp(portOf(server.url));
    await waitFor(() => state(m) === 'ready', 'the background restart');
    assert.equal((await executeTool(tool(m, 'mcp__everything__echo'), { message: 'idle' }, makeToolContext(temp.dir))).content, 'Echo: idle');
  } finally {
    await m.close();
    await server.stop();
  }
});

test('streamable HTTP: the idle ping alone notices a server that stops answering (no stream to break)', { timeout: 120_000 }, async () => {
  // A server that accepts connections and never answers: the kill of the real server above
  // also breaks its event stream; this one only fails the ping (its timeout is startTimeoutMs, capped at 10 s).
  const { createServer } = await import('node:http');
  const real = await startEverythingHttp();
  let swallow = false;
  const { request } = await import('node:http');
  const proxy = createServer((req, res) => {
    if (swallow) return; // never answers
    const upstream = request(real.url, { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
      up.on('error', () => res.destroy());
    });
    // Connections cut at the end of the test (either side) are expected, not failures.
    upstream.on('error', () => res.destroy());
    req.on('error', () => upstream.destroy());
    res.on('error', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/mcp`;
  const events: EventInput[] = [];
  const m = manager(httpSpec(url, { pingIntervalMs: 100, startTimeoutMs: 5_000 }), events, 1);
  m.start();
  await m.settled();
  try {
    assert.equal(state(m), 'ready');
    swallow = true;
    await waitFor(() => state(m) === 'failed', 'the ping timing out');
    assert.match(m.statuses()[0]!.error ?? '', /not answering/);
  } finally {
    await m.close();
    proxy.closeAllConnections();
    proxy.close();
    await real.stop();
  }
});

test('stdio: a server process that exits while idle is marked failed with a notice and restarts', { timeout: 120_000 }, async () => {
  const pidFile = join(temp.dir, 'idle.pid');
  const spec = stdioSpec('idler', '/bin/sh', ['-c', `echo $$ > ${pidFile}; exec "${process.execPath}" "${EVERYTHING_BIN}" stdio`], { timeoutMs: NEVER });
  const events: EventInput[] = [];
  const m = manager(spec, events);
  m.start();
  await m.settled();
  try {
    assert.equal(state(m), 'ready');
    process.kill(Number((await readFile(pidFile, 'utf8')).trim()), 'SIGKILL');
    await waitFor(() => events.some((e) => e.type === 'mcp-status' && e.state === 'failed'), 'the failed status');
    assert.ok(events.some((e) => e.type === 'notice' && /MCP server "idler" failed: the server closed the connection/.test(e.message)));
    await waitFor(() => state(m) === 'ready', 'the restart');
    assert.equal((await executeTool(tool(m, 'mcp__idler__echo'), { message: 'again' }, makeToolContext(temp.dir))).content, 'Echo: again');
  } finally {
    await m.close();
  }
});

test('stdio: a server killed mid-call ends the call at once; gone for good, its tools answer with an error', { timeout: 120_000 }, async () => {
  const pidFile = join(temp.dir, 'gone.pid');
  const flag = join(temp.dir, 'gone.flag');
  // Starts the real server the first time only; every restart fails (the command exits 1).
  const spec = stdioSpec('gone', '/bin/sh', ['-c', `test -e ${flag} && exit 1; touch ${flag}; echo $$ > ${pidFile}; exec "${process.execPath}" "${EVERYTHING_BIN}" stdio`], { timeoutMs: NEVER, startTimeoutMs: 5_000 });
  const events: EventInput[] = [];
  const m = manager(spec, events, 2);
  m.start();
  await m.settled();
  try {
    const call = executeTool(tool(m, 'mcp__gone__trigger-long-running-operation'), { duration: 60, steps: 60 }, makeToolContext(temp.dir, { toolUseId: 'tu-gone' }));
    await waitFor(() => events.some((e) => e.type === 'tool-progress' && e.toolUseId === 'tu-gone'), 'progress');
    process.kill(Number((await readFile(pidFile, 'utf8')).trim()), 'SIGKILL');
    const result = await call;
    assert.equal(result.isError, true);
    assert.match(result.content, /MCP server "gone" stopped during the call/);
    await waitFor(() => /gave up after 2 attempts/.test(m.statuses()[0]!.error ?? ''), 'giving up');
    const echo = await executeTool(tool(m, 'mcp__gone__echo'), { message: 'x' }, makeToolContext(temp.dir));
    assert.equal(echo.isError, true);
    assert.match(echo.content, /MCP server "gone" is not available \(failed: /);
  } finally {
    await m.close();
  }
});
