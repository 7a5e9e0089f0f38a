import '../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventInput } from '../../../src/events/types';
import { createMcpManager, type McpManager } from '../../../src/mcp/manager';
import { executeTool } from '../../../src/tools/execute-tool';
import type { Tool } from '../../../src/tools/types';
import { makeTempDir, type TempDir } from '../../helpers/tmp';
import { makeToolContext } from '../../helpers/tool-context';
import { everythingStdio, startEverythingHttp, type HttpEverything } from '../../helpers/mcp-servers';
import type { McpServerSpec } from '../../../src/mcp/servers';

/**
 * The client against the real `@modelcontextprotocol/server-everything`, over stdio and over
 * streamable HTTP: the same cases on both transports.
 */
let temp: TempDir;
let http: HttpEverything;
before(async () => {
  temp = await makeTempDir('legion-mcp-');
  http = await startEverythingHttp();
});
after(async () => {
  await http?.stop();
  await temp?.cleanup();
});

interface Started { manager: McpManager; events: EventInput[]; tool(name: string): Tool }

async function startManager(spec: McpServerSpec): Promise<Started> {
  const events: EventInput[] = [];
  const manager = createMcpManager({
    servers: [spec], untrusted: new Set(), verify: async () => null, legionDir: join(temp.dir, '.legion'), clientVersion: '0.0.0-test',
    reservedNames: new Set(['file_read']), emit: (e) => events.push(e), secrets: [], canAskUser: false,
  });
  manager.start();
  await manager.settled();
  return {
    manager, events,
    tool(name) {
      const found = manager.tools().find((t) => t.name === name);
      assert.ok(found, `${name} in ${manager.tools().map((t) => t.name).join(', ')}`);
      return found;
    },
  };
}

for (const transport of ['stdio', 'http'] as const) {
  test(`server-everything over ${transport}: list, echo, get-sum, structured content, image, error, progress and cancel`, async () => {
    const spec = transport === 'stdio' ? everythingStdio() : { ...everythingStdio(), transport: { kind: 'http' as const, url: http.url, headers: {} } };
    const { manager, events, tool } = await startManager(spec);
    try {
      const ready = events.filter((e) => e.type === 'mcp-status' && e.state === 'ready');
      assert.equal(ready.length >= 1, true, JSON.stringify(events));
      const names = manager.tools().map((t) => t.name);
      for (const expected of ['mcp__everything__echo', 'mcp__everything__get-sum', 'mcp__everything__get-structured-content', 'mcp__everything__get-tiny-image', 'mcp__everything__trigger-long-running-operation']) {
        assert.ok(names.includes(expected), `${expected} listed`);
      }
      const echo = tool('mcp__everything__echo');
      assert.equal((echo as any).inputJsonSchema.type, 'object');
      assert.ok((echo as any).inputJsonSchema.properties.message);
      const context = makeToolContext(temp.dir);
      assert.deepEqual(await executeTool(echo, { message: 'hello' }, context), { content: 'Echo: hello', summary: 'Echo: hello' });
      const sum = await executeTool(tool('mcp__everything__get-sum'), { a: 2, b: 40 }, context);
      assert.match(sum.content, /42/);
      const structured = await executeTool(tool('mcp__everything__get-structured-content'), { location: 'Chicago' }, context);
      assert.equal(structured.isError, undefined);
      assert.ok(typeof JSON.parse(structured.content).temperature === 'number', structured.content);
      const image = await executeTool(tool('mcp__everything__get-tiny-image'), {}, context);
      assert.match(image.content, /\[image: image\/png, [\d.]+ (B|kB) — not shown to the model\]/);
      assert.doesNotMatch(image.content, /iVBOR/, 'no base64 reaches the model');
      const invalid = await executeTool(tool('mcp__everything__get-sum'), { a: 'not a number' }, context);
      assert.equal(invalid.isError, true);
      assert.match(invalid.content, /a|number|invalid/i);

      // Progress, then Esc: the call ends as interrupted and the server is told to cancel.
      const controller = new AbortController();
      const progressed = new Promise<void>((resolve) => {
        const timer = setInterval(() => {
          if (events.some((e) => e.type === 'tool-progress' && e.toolUseId === 'tu-long')) { clearInterval(timer); resolve(); }
        }, 20);
      });
      const long = executeTool(tool('mcp__everything__trigger-long-running-operation'), { duration: 30, steps: 60 }, makeToolContext(temp.dir, { toolUseId: 'tu-long', signal: controller.signal }));
      await progressed;
      controller.abort();
      const ended = await long;
      assert.equal(ended.isError, true);
      assert.match(ended.content, /interrupted/);
      const progress = events.find((e) => e.type === 'tool-progress');
      assert.deepEqual(progress && { ...progress, progress: 1 }, { type: 'tool-progress', sessionId: 'session-user__agent__default', participantId: 'agent', toolUseId: 'tu-long', progress: 1, total: 60 });
      // The server is still usable after the cancel.
      assert.equal((await executeTool(echo, { message: 'again' }, context)).content, 'Echo: again');
    } finally {
      await manager.close();
    }
    if (transport === 'stdio') {
      const log = await readFile(join(temp.dir, '.legion', 'logs', 'mcp-everything.log'), 'utf8');
      assert.match(log, /ready: \d+ tools/);
    }
  });
}

test('per-server timeoutMs: a call longer than it is an error result naming the limit', async () => {
  // 2 s against a 5 s operation: the limit is the feature, and no loaded machine makes the 5 s call answer first.
  const { manager, tool } = await startManager(everythingStdio({ timeoutMs: 2_000 }));
  try {
    const result = await executeTool(tool('mcp__everything__trigger-long-running-operation'), { duration: 5, steps: 5 }, makeToolContext(temp.dir));
    assert.equal(result.isError, true);
    assert.match(result.content, /did not answer within 2000 ms \(timeoutMs\)/);
  } finally {
    await manager.close();
  }
});
