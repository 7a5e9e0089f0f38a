import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createMcpManager } from '../../../src/mcp/manager';
import type { EventInput } from '../../../src/events/types';
import { startAppHarness } from '../../helpers/app-harness';
import { withTempDir } from '../../helpers/tmp';
import { everythingStdio } from '../../helpers/mcp-servers';

/**
 * server-everything's `trigger-elicitation-request` asks the client for a form in the middle
 * of the call: Legion asks the user in the calling agent's user lane (`asker → user · mcp`)
 * and sends the typed answer back; headless, it declines without asking.
 */
const SCRIPT = `
replies:
  - { agent: asker, on: message, toolCalls: [{ name: mcp__everything__trigger-elicitation-request, input: {} }] }
  - { agent: asker, on: tool-result, text: "{{lastText}}" }
`;

async function withServer<T>(dir: string, canAskUser: boolean, fn: (tools: ReturnType<ReturnType<typeof createMcpManager>['tools']>) => Promise<T>): Promise<T> {
  const events: EventInput[] = [];
  const manager = createMcpManager({
    servers: [everythingStdio()], untrusted: new Set(), verify: async () => null, legionDir: join(dir, '.legion'), clientVersion: 'test',
    reservedNames: new Set(), emit: (e) => events.push(e), secrets: [], canAskUser,
  });
  manager.start();
  await manager.settled();
  try {
    return await fn(manager.tools());
  } finally {
    await manager.close();
  }
}

test('elicitation becomes a question in the user lane; the answer goes back to the server as the form', async () => {
  await withTempDir(async (dir) => {
    await withServer(dir, true, async (tools) => {
      const h = await startAppHarness({ dir, agents: [{ id: 'asker', tools: ['mcp__everything__*'] }], tools, script: SCRIPT });
      try {
        const sent = h.core.send('asker', 'fill the form');
        assert.ok(sent.ok);
        await h.waitFor((e) => e.type === 'notice' && /asker asks you: MCP server "everything" asks: Please provide inputs/.test(e.message), 20_000);
        const lane = 'session-asker__user__mcp';
        const question = h.core.history(lane)[0]!;
        assert.match(question.content[0]!.type === 'text' ? question.content[0].text : '', /- name \(string, required\)/);
        assert.equal(h.core.reply(lane, '{"name":"Ada Lovelace","check":true}').ok, true);
        const text = await h.core.idle(sent.sessionId);
        assert.match(text, /Ada Lovelace/);
        assert.doesNotMatch(text, /declined/i);
      } finally {
        await h.close();
      }
    });
  });
});

test('headless: an elicitation is declined without asking anyone', async () => {
  await withTempDir(async (dir) => {
    await withServer(dir, false, async (tools) => {
      const h = await startAppHarness({ dir, agents: [{ id: 'asker', tools: ['mcp__everything__*'] }], tools, script: SCRIPT, headless: { approve: 'all' } });
      try {
        const sent = h.core.send('asker', 'fill the form');
        assert.ok(sent.ok);
        const text = await h.core.idle(sent.sessionId);
        assert.match(text, /declined/i);
        assert.ok(!h.events.some((e) => e.type === 'session-open' && e.responderId === 'user' && e.initiatorId === 'asker'));
      } finally {
        await h.close();
      }
    });
  });
});
