import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { withTempDir } from '../../helpers/tmp';
import { startAppHarness } from '../../helpers/app-harness';

// The shipped resource-agent (config/agents/resource-agent.yaml) must be able to do its job:
// spawn a helper with workspace tools, since nobody can grant a tool they do not hold.
test('shipped resource-agent spawns a scribe with file tools, and cannot grant approval authority', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      script: `
replies:
  - agent: resource-agent
    on: message
    when: scribe
    toolCalls: [{ name: spawn_agent, input: { id: scribe, name: Scribe, description: writes notes, systemPrompt: "You write notes.", tools: [file_read, file_write, file_edit, file_list] } }]
  - { agent: resource-agent, on: tool-result, text: "{{lastText}}" }
  - agent: resource-agent
    on: message
    when: reviewer
    toolCalls: [{ name: spawn_agent, input: { id: reviewer, name: Reviewer, description: approves, systemPrompt: "You review.", tools: [resolve_approval], approvalAuthority: "*" } }]
  - { agent: resource-agent, on: tool-error, text: "{{lastText}}" }
`,
    });
    const first = h.core.send('resource-agent', 'make a scribe');
    assert.ok(first.ok);
    await h.core.idle(first.sessionId);
    const scribe = JSON.parse(await readFile(h.layout.participant('scribe'), 'utf8')) as { tools: string[]; createdBy: string };
    assert.deepEqual(scribe.tools, ['file_read', 'file_write', 'file_edit', 'file_list']);
    assert.equal(scribe.createdBy, 'resource-agent');

    const second = h.core.send('resource-agent', 'make a reviewer');
    assert.ok(second.ok);
    const text = await h.core.idle(second.sessionId);
    assert.match(text, /cannot grant/);
    assert.equal(h.registry.get('reviewer'), undefined);
    await h.close();
  });
});
