import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createMcpManager } from '../../../src/mcp/manager';
import { startAppHarness } from '../../helpers/app-harness';
import { withTempDir } from '../../helpers/tmp';
import { everythingStdio } from '../../helpers/mcp-servers';

/**
 * docs/undo.md: a batch gets a checkpoint when a call may change the workspace's files; an MCP
 * tool the server marks read-only (`readOnlyHint`) does not (server-everything: `get-sum` is
 * read-only, `toggle-simulated-logging` is not). The tool's own metadata decides (Tool.readOnly).
 */
const SCRIPT = `
replies:
  - { agent: worker, when: "go", toolCalls: [{ name: mcp__everything__get-sum, input: { a: 1, b: 2 } }] }
  - { agent: worker, on: tool-result, when: "3", toolCalls: [{ name: mcp__everything__toggle-simulated-logging, input: {} }] }
  - { agent: worker, on: tool-result, text: "done" }
`;

test('an MCP tool marked read-only gets no checkpoint; one that is not gets one', async () => {
  await withTempDir(async (dir) => {
    const manager = createMcpManager({
      servers: [everythingStdio()], untrusted: new Set(), verify: async () => null, legionDir: join(dir, '.legion'), clientVersion: 'test',
      reservedNames: new Set(), emit: () => undefined, secrets: [], canAskUser: false,
    });
    manager.start();
    await manager.settled();
    try {
      const tools = manager.tools();
      assert.equal(tools.find((t) => t.name === 'mcp__everything__get-sum')?.readOnly, true);
      assert.equal(tools.find((t) => t.name === 'mcp__everything__toggle-simulated-logging')?.readOnly, false);
      const h = await startAppHarness({
        dir, agents: [{ id: 'worker', tools: ['mcp__everything__*'] }], tools, script: SCRIPT, rules: { 'mcp__everything__*': 'allow' },
      });
      try {
        const sent = h.core.send('worker', 'go');
        assert.ok(sent.ok);
        await h.core.idle(sent.sessionId);
        const starts = h.events.flatMap((e) => (e.type === 'tool-call-start' ? [[e.name, e.toolUseId] as const] : []));
        assert.deepEqual(starts.map(([name]) => name), ['mcp__everything__get-sum', 'mcp__everything__toggle-simulated-logging']);
        const checkpointed = new Set(h.events.flatMap((e) => (e.type === 'checkpoint' ? e.toolUseIds : [])));
        assert.deepEqual([...checkpointed], [starts[1]![1]], 'only the call that is not read-only');
      } finally {
        await h.close();
      }
    } finally {
      await manager.close();
    }
  });
});
