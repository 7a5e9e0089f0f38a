import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAppHarness } from '../../helpers/app-harness';
import { withTempDir } from '../../helpers/tmp';
import { EVERYTHING_BIN } from '../../helpers/mcp-servers';

/**
 * Esc on a turn running an MCP tool (docs/mcp.md): the core's cancel reaches the call itself,
 * the server is told (`notifications/cancelled`) and the tool's row ends interrupted at once,
 * although the server's `timeoutMs` is 60 s and the operation would run 30 s. The whole
 * composition (core, turn, tool adapter, connection) with the real server-everything. The turn
 * ends on its own abort whatever the call does; that the call itself is cancelled on the server
 * (the abort forwarded, `notifications/cancelled` within 1 s) is checked on the wire in
 * failures.test.ts.
 */
const SCRIPT = `
version: 1
replies:
  - agent: ur-agent
    first: true
    toolCalls:
      - { name: mcp__everything__trigger-long-running-operation, input: { duration: 30, steps: 60 } }
  - { agent: ur-agent, on: tool-result, repeat: true, text: "done" }
  - { agent: ur-agent, on: tool-error, repeat: true, text: "it failed" }
`;

test('Esc during a 30 s MCP call with timeoutMs 60 s: the call ends, interrupted, within 5 s of the cancel', { timeout: 90_000 }, async () => {
  await withTempDir(async (dir) => {
    const userConfig = join(dir, '.legion', 'test-home', '.config', 'legion');
    mkdirSync(userConfig, { recursive: true, mode: 0o700 });
    writeFileSync(join(userConfig, 'config.yaml'), `mcpServers:\n  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING_BIN)}, stdio]\n    timeoutMs: 60000\n`, { mode: 0o600 });
    const h = await startAppHarness({
      dir, script: SCRIPT,
      agents: [{ id: 'ur-agent', tools: ['mcp__everything__trigger-long-running-operation'] }],
    });
    try {
      h.startBackground();
      const sent = h.core.send('ur-agent', 'run the long operation');
      assert.ok(sent.ok);
      await h.waitFor((e) => e.type === 'tool-progress' && e.sessionId === sent.sessionId, 60_000);
      const escAt = Date.now();
      h.core.cancel(sent.sessionId);
      const ended = await h.waitFor((e) => e.type === 'tool-call-end' && e.sessionId === sent.sessionId, 10_000);
      const took = Date.now() - escAt;
      assert.ok(ended.type === 'tool-call-end' && ended.isError, JSON.stringify(ended));
      // Only the forwarded cancel ends it before the server's 30 s: 5 s leaves a loaded machine room.
      assert.ok(took < 5_000, `the call ended ${took} ms after Esc`);
      await h.core.idle(sent.sessionId);
      const result = h.core.history(sent.sessionId).flatMap((m) => m.content).find((b) => b.type === 'tool_result');
      assert.ok(result && result.type === 'tool_result' && /interrupted/.test(result.content), JSON.stringify(result));
    } finally {
      await h.close();
    }
  });
});
