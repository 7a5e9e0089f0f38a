import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { startAppHarness } from '../../helpers/app-harness';
import { withTempDir } from '../../helpers/tmp';
import type { Tool } from '../../../src/tools/types';

/** Reports the call chain and session the tool context carries. */
const whoami: Tool<Record<string, never>> = {
  name: 'whoami',
  description: 'test: report the call chain',
  schema: z.strictObject({}),
  keyArgument: () => undefined,
  async execute(_input, context) {
    return { content: `${context.chain.join('>')} in ${context.sessionId}` };
  },
};

const call = {
  sessionId: 'session-lead__leaf__default', initiatorId: 'lead', responderId: 'leaf', name: 'default', text: 'who are you?',
  chain: ['user', 'lead', 'leaf'], sessionChain: ['session-user__lead__default', 'session-lead__leaf__default'],
};

test('a turn delegated from another invocation (docs/engine.md#delegation) runs in the caller\'s session with the caller\'s chain; one naming another session or chain is refused', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [{ id: 'lead', tools: ['communicator'] }, { id: 'leaf', tools: ['whoami', 'communicator'] }],
      tools: [whoami],
      script: `
replies:
  - { agent: leaf, on: message, toolCalls: [{ name: whoami, input: {} }] }
  - { agent: leaf, on: tool-result, text: "{{lastText}}" }
`,
    });
    assert.deepEqual(h.core.delegated({ ...call, sessionId: 'session-user__leaf__default' }).ok, false, 'a session that is not the initiator\'s');
    assert.deepEqual(h.core.delegated({ ...call, chain: ['user', 'lead'] }).ok, false, 'a chain not ending with the responder');
    assert.deepEqual(h.core.delegated({ ...call, sessionChain: ['session-user__lead__default'] }).ok, false, 'a session chain not ending with the session');
    assert.deepEqual(h.core.delegated({ ...call, responderId: 'nobody', sessionId: 'session-lead__nobody__default', chain: ['user', 'lead', 'nobody'], sessionChain: ['session-lead__nobody__default'] }).ok, false);
    const sent = h.core.delegated(call);
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(call.sessionId), 'user>lead>leaf in session-lead__leaf__default');
    assert.equal(h.core.lastOutcome(call.sessionId)?.kind, 'done');
    await h.close();
  });
});
