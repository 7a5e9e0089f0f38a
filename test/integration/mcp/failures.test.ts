import '../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { EventInput } from '../../../src/events/types';
import { createMcpManager } from '../../../src/mcp/manager';
import { createServerConnection, type McpState } from '../../../src/mcp/connection';
import { createServerLog } from '../../../src/mcp/server-log';
import { executeTool } from '../../../src/tools/execute-tool';
import { createMcpTool } from '../../../src/mcp/tool-adapter';
import { makeTempDir, type TempDir } from '../../helpers/tmp';
import { makeToolContext } from '../../helpers/tool-context';
import { EVERYTHING_BIN, FILESYSTEM_BIN, MCP_FIXTURES, everythingStdio, stdioSpec } from '../../helpers/mcp-servers';

let temp: TempDir;
before(async () => { temp = await makeTempDir('legion-mcp-fail-'); });
after(async () => { await temp?.cleanup(); });

const waitFor = async (check: () => boolean, what: string, ms = 30_000): Promise<void> => {
  const end = Date.now() + ms; // a safety net only: every wait ends on an event well before
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

function manager(specs: Parameters<typeof createMcpManager>[0]['servers'], events: EventInput[]) {
  return createMcpManager({
    servers: specs, untrusted: new Set(), verify: async () => null, legionDir: join(temp.dir, '.legion'), clientVersion: '0.0.0-test',
    reservedNames: new Set(), emit: (e) => events.push(e), secrets: [], canAskUser: false,
    backoff: { baseMs: 50, maxMs: 200, maxAttempts: 3 },
  });
}

test('a server crashing mid-call: the call gets an error result, the server restarts, the others are untouched', async () => {
  const pidFile = join(temp.dir, 'crash.pid');
  const crashy = stdioSpec('crashy', '/bin/sh', ['-c', `echo $$ > ${pidFile}; exec "${process.execPath}" "${EVERYTHING_BIN}" stdio`]);
  const events: EventInput[] = [];
  const m = manager([crashy, everythingStdio()], events);
  m.start();
  await m.settled();
  try {
    const long = m.tools().find((t) => t.name === 'mcp__crashy__trigger-long-running-operation')!;
    const call = executeTool(long, { duration: 30, steps: 30 }, makeToolContext(temp.dir, { toolUseId: 'tu-crash' }));
    await waitFor(() => events.some((e) => e.type === 'tool-progress' && e.toolUseId === 'tu-crash'), 'progress');
    process.kill(Number((await readFile(pidFile, 'utf8')).trim()), 'SIGKILL');
    const result = await call;
    assert.equal(result.isError, true);
    assert.match(result.content, /crashy/);
    assert.ok(events.some((e) => e.type === 'mcp-status' && e.server === 'crashy' && e.state === 'failed'));
    assert.ok(events.some((e) => e.type === 'notice' && /MCP server "crashy" failed/.test(e.message)));
    await waitFor(() => m.statuses().find((s) => s.name === 'crashy')!.state === 'ready', 'the restart');
    assert.ok(events.some((e) => e.type === 'notice' && /MCP server "crashy" is back/.test(e.message)));
    const echo = m.tools().find((t) => t.name === 'mcp__crashy__echo')!;
    assert.equal((await executeTool(echo, { message: 'after' }, makeToolContext(temp.dir))).content, 'Echo: after');
    assert.equal(m.statuses().find((s) => s.name === 'everything')!.state, 'ready');
    assert.ok(!events.some((e) => e.type === 'mcp-status' && e.server === 'everything' && e.state === 'failed'));
  } finally {
    await m.close();
  }
});

test('a command that does not exist and a server that never answers initialize: failed with the reason, others start', async () => {
  const events: EventInput[] = [];
  const m = manager([
    stdioSpec('ghost', 'legion-no-such-command-14', []),
    // 400 ms is safe under load: the silent server never answers, so only this limit can end its start.
    stdioSpec('silent', process.execPath, [join(MCP_FIXTURES, 'silent-server.mjs')], { startTimeoutMs: 400 }),
    everythingStdio(),
  ], events);
  m.start();
  await m.settled();
  try {
    // The first failure of each, from the events (by now a restart may already be under way).
    const firstFailure = (server: string) => events.find((e) => e.type === 'mcp-status' && e.server === server && e.state === 'failed') as { error?: string } | undefined;
    assert.match(firstFailure('ghost')?.error ?? '', /ENOENT/);
    assert.match(firstFailure('silent')?.error ?? '', /timed out/i);
    assert.equal(m.statuses().find((s) => s.name === 'everything')!.state, 'ready');
    // Restarts with backoff until it gives up (maxAttempts 3 here).
    await waitFor(() => /gave up after 3 attempts/.test(m.statuses().find((s) => s.name === 'ghost')!.error ?? ''), 'giving up');
    assert.equal(events.filter((e) => e.type === 'mcp-status' && e.server === 'ghost' && e.state === 'starting').length, 3);
  } finally {
    await m.close();
  }
});

test('tools/list_changed refreshes the catalogue (and an mcp-status event carries the new tool)', async () => {
  const events: EventInput[] = [];
  const m = manager([stdioSpec('grow', process.execPath, [join(MCP_FIXTURES, 'list-changed-server.mjs')])], events);
  m.start();
  await m.settled();
  try {
    const before = m.tools();
    assert.deepEqual(before.map((t) => t.name), ['mcp__grow__add-tool']);
    await executeTool(before[0]!, {}, makeToolContext(temp.dir));
    await waitFor(() => m.tools().some((t) => t.name === 'mcp__grow__added-tool'), 'the new tool');
    assert.notEqual(m.tools(), before, 'a new catalogue array (caches refresh)');
    assert.ok(events.some((e) => e.type === 'mcp-status' && e.state === 'ready' && e.tools.includes('mcp__grow__added-tool')));
    const added = m.tools().find((t) => t.name === 'mcp__grow__added-tool')!;
    assert.equal((await executeTool(added, {}, makeToolContext(temp.dir))).content, 'added');
  } finally {
    await m.close();
  }
});

test('cancel sends notifications/cancelled for the running request', async () => {
  const sent: unknown[] = [];
  const states: McpState[] = [];
  const connection = createServerConnection({
    spec: everythingStdio(),
    log: createServerLog(join(temp.dir, 'spy.log'), { secrets: [] }),
    clientVersion: '0',
    onStatus: (s) => states.push(s),
    verify: async () => null,
    makeTransport: () => {
      const transport = new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_BIN, 'stdio'], stderr: 'pipe' });
      const send = transport.send.bind(transport);
      transport.send = (message) => { sent.push(message); return send(message); };
      return transport;
    },
  });
  await connection.start();
  try {
    const controller = new AbortController();
    let progressed = false;
    const call = connection.call('trigger-long-running-operation', { duration: 20, steps: 40 }, { signal: controller.signal, onProgress: () => { progressed = true; } });
    await waitFor(() => progressed, 'progress');
    controller.abort();
    const outcome = await call;
    assert.deepEqual(outcome, { ok: false, kind: 'cancelled', error: 'cancelled' });
    const request = sent.find((m: any) => m.method === 'tools/call') as any;
    const cancelled = sent.find((m: any) => m.method === 'notifications/cancelled') as any;
    assert.ok(cancelled, 'notifications/cancelled sent');
    assert.equal(cancelled.params.requestId, request.id);
  } finally {
    await connection.close();
  }
  assert.deepEqual(states, ['starting', 'ready', 'stopped']);
});

test('Esc forwards the abort to the running call at once: notifications/cancelled sent and the tool result says interrupted within 5 s of the 30 s operation, with the server\'s timeout at 60 s', async () => {
  const sent: { message: any; at: number }[] = [];
  const connection = createServerConnection({
    spec: everythingStdio({ timeoutMs: 60_000 }),
    log: createServerLog(join(temp.dir, 'spy-60.log'), { secrets: [] }),
    clientVersion: '0',
    onStatus: () => undefined,
    verify: async () => null,
    makeTransport: () => {
      const transport = new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_BIN, 'stdio'], stderr: 'pipe' });
      const send = transport.send.bind(transport);
      transport.send = (message) => { sent.push({ message, at: Date.now() }); return send(message); };
      return transport;
    },
  });
  await connection.start();
  try {
    const tool = createMcpTool('mcp__everything__trigger-long-running-operation', { name: 'trigger-long-running-operation', inputSchema: { type: 'object' } }, connection, {
      onProgress: () => { progressed = true; }, enter: () => () => undefined,
    });
    const controller = new AbortController();
    let progressed = false;
    // 30 s of work on the server: only the forwarded abort can end it sooner.
    const call = executeTool(tool, { duration: 30, steps: 60 }, makeToolContext(temp.dir, { toolUseId: 'tu-60', signal: controller.signal }));
    await waitFor(() => progressed, 'progress');
    const escAt = Date.now();
    controller.abort();
    const result = await call;
    const endedAt = Date.now();
    assert.equal(result.isError, true);
    assert.match(result.content, /interrupted/);
    // Only the forwarded abort ends the call before the server's 30 s of work: 5 s leaves a loaded machine room.
    assert.ok(endedAt - escAt < 5_000, `the tool result said interrupted ${endedAt - escAt} ms after Esc`);
    const request = sent.find((m) => m.message.method === 'tools/call')!;
    const cancelled = sent.find((m) => m.message.method === 'notifications/cancelled');
    assert.ok(cancelled, 'notifications/cancelled sent');
    assert.equal(cancelled.message.params.requestId, request.message.id);
    assert.ok(cancelled.at - escAt < 5_000, `notifications/cancelled sent ${cancelled.at - escAt} ms after Esc`);
  } finally {
    await connection.close();
  }
});

test('server-filesystem: lists and reads inside its allowed directory; outside is the server\'s error result', async () => {
  const dir = join(temp.dir, 'fs-root');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'hello.txt'), 'hello from fs\n');
  const events: EventInput[] = [];
  const m = manager([stdioSpec('fs', process.execPath, [FILESYSTEM_BIN, dir])], events);
  m.start();
  await m.settled();
  try {
    const names = m.tools().map((t) => t.name);
    assert.ok(names.includes('mcp__fs__read_text_file') || names.includes('mcp__fs__read_file'), names.join(', '));
    const read = m.tools().find((t) => t.name === 'mcp__fs__read_text_file') ?? m.tools().find((t) => t.name === 'mcp__fs__read_file')!;
    const ok = await executeTool(read, { path: join(dir, 'hello.txt') }, makeToolContext(temp.dir));
    assert.match(ok.content, /hello from fs/);
    const refused = await executeTool(read, { path: '/etc/passwd' }, makeToolContext(temp.dir));
    assert.equal(refused.isError, true);
  } finally {
    await m.close();
  }
});
