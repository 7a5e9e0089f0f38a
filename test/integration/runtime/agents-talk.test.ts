import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { withTempDir } from '../../helpers/tmp';
import { startAppHarness, APP_DIR } from '../../helpers/app-harness';
import type { LegionEvent } from '../../../src/events/types';

/**
 * Talking is universal (docs/design.md#participants-sessions-runs): the shipped resource-agent
 * may grant the communicator, an agent spawned without a tools list gets it, and the helper it
 * makes can then ask another agent for help. A refused spawn cannot pass for a success.
 */
test('resource-agent spawns a scribe that writes files and asks others; scribe then talks to ur-agent', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      script: `
replies:
  - agent: resource-agent
    on: message
    toolCalls: [{ name: spawn_agent, input: { id: scribe, name: Scribe, description: writes files, systemPrompt: "You write files.", tools: [file_write, file_read, communicator] } }]
  - { agent: resource-agent, on: tool-result, text: "{{lastText}}" }
  - { agent: resource-agent, on: tool-error, text: "{{lastText}}" }
  - agent: scribe
    on: message
    toolCalls: [{ name: communicator, input: { targetId: ur-agent, message: "which folder do notes go in?", sessionName: help } }]
  - { agent: ur-agent, on: message, text: "notes/ please" }
  - { agent: scribe, on: tool-result, text: "ur-agent said: {{lastText}}" }
`,
    });
    const made = h.core.send('resource-agent', 'an agent named scribe that writes files and can ask others for help');
    assert.ok(made.ok);
    const answer = await h.core.idle(made.sessionId);
    assert.match(answer, /^spawned scribe; tools: file_write, file_read, communicator$/);
    const file = JSON.parse(await readFile(h.layout.participant('scribe'), 'utf8')) as { tools: string[] };
    assert.deepEqual(file.tools, ['file_write', 'file_read', 'communicator']);

    const asked = h.core.send('scribe', 'write the notes');
    assert.ok(asked.ok);
    assert.equal(await h.core.idle(asked.sessionId), 'ur-agent said: notes/ please');
    assert.ok(h.events.some((e: LegionEvent) => e.type === 'session-open' && e.sessionId === 'session-scribe__ur-agent__help'));
    await h.close();
  });
});

test('an agent spawned without a tools list gets communicator and list_participants', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      script: `
replies:
  - agent: resource-agent
    on: message
    toolCalls: [{ name: spawn_agent, input: { id: helper, name: Helper, systemPrompt: "You help." } }]
  - { agent: resource-agent, on: tool-result, text: "{{lastText}}" }
  - { agent: resource-agent, on: tool-error, text: "{{lastText}}" }
`,
    });
    const made = h.core.send('resource-agent', 'make a helper');
    assert.ok(made.ok);
    assert.equal(await h.core.idle(made.sessionId), 'spawned helper; tools: communicator, list_participants');
    const helper = h.registry.get('helper');
    assert.ok(helper?.kind === 'agent');
    assert.deepEqual(helper.tools, ['communicator', 'list_participants']);
    await h.close();
  });
});

test('a refused spawn starts with REFUSED, says nothing changed and what to do instead', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      script: `
replies:
  - agent: resource-agent
    on: message
    toolCalls: [{ name: spawn_agent, input: { id: judge, name: Judge, systemPrompt: "You judge.", tools: [resolve_approval, communicator] } }]
  - { agent: resource-agent, on: tool-result, text: "{{lastText}}" }
  - { agent: resource-agent, on: tool-error, text: "{{lastText}}" }
`,
    });
    const made = h.core.send('resource-agent', 'make a judge');
    assert.ok(made.ok);
    const text = await h.core.idle(made.sessionId);
    assert.equal(
      text,
      'REFUSED: spawn_agent "judge": cannot grant tools you do not hold: resolve_approval. Nothing changed: no agent was created. ' +
        'Instead: call again granting only tools and approvalAuthority you hold yourself (list_participants shows yours), ' +
        'or tell your caller that the user must grant the rest.',
    );
    assert.equal(h.registry.get('judge'), undefined);
    const end = h.events.find((e) => e.type === 'tool-call-end' && e.name === 'spawn_agent');
    assert.ok(end?.type === 'tool-call-end' && end.isError && end.summary.startsWith('refused: '));
    await h.close();
  });
});

test("the shipped resource-agent's prompt tells it to report a REFUSED result plainly", async () => {
  const yaml = await readFile(`${APP_DIR}/config/agents/resource-agent.yaml`, 'utf8');
  assert.match(yaml, /tools: \[[^\]]*\bcommunicator\b[^\]]*\]/s);
  assert.match(yaml, /starts\s+with REFUSED means nothing changed/);
  assert.match(yaml, /begin your answer with "Failed:"/);
});
