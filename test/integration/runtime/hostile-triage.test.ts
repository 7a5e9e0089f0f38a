import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startAppHarness } from '../../helpers/app-harness';
import { personOnly } from '../../../src/authz/policy';
import { shippedRules } from '../../helpers/rules';
import { createAuthorizer } from '../../../src/authz/authorizer';
import { eventsOf } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';

// docs/shell-rules.md: a shell line that is not plain words "can never be allowed by a rule…
// Only a person approves it". LLM triage is a model reading what the agent wrote (a comment in
// the command, a convincing input): it must not approve such a line, however confident.
/**
 * An agent runs `command` under `allow shell`, with LLM triage on and approving anything: the
 * command must not run, the triage model must not even see it, and the headless person refuses.
 */
async function triageNeverSees(command: string, reasoning: string): Promise<void> {
  await withTempDir(async (dir) => {
    const asked: string[] = [];
    const h = await startAppHarness({
      dir,
      config: { escalation: { llm: { enabled: true } } },
      agents: [{ id: 'worker', tools: ['shell'] }],
      rules: { shell: 'allow' },
      headless: { approve: 'deny' },
      triage: async (request) => { asked.push(String((request.input as { command?: string }).command)); return { approve: true, reasoning }; },
      script: `
replies:
  - { agent: worker, toolCalls: [{ name: shell, input: { command: "${command}" } }] }
  - { agent: worker, on: tool-error, text: "refused" }
  - { agent: worker, on: tool-result, text: "ran" }
`,
    });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'refused');
    assert.equal(existsSync(join(dir, 'PWNED')), false, 'the command ran');
    assert.deepEqual(eventsOf(h.events, 'approval-resolve').map((r) => r.decidedBy), ['headless']);
    assert.deepEqual(asked, [], 'not even shown to the triage model');
    await h.close();
  });
}

test('LLM triage never approves a shell line that is not plain words: a person decides', () =>
  triageNeverSees('echo hi $(touch PWNED)', 'harmless echo'));

// The same for an agent approver: an agent granted approval authority over `shell` is a model
// too. A line that is not plain words goes to the user, not up the chain to it.
test('an agent approver with authority over shell is never asked to approve a line that is not plain words', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [
        { id: 'lead', tools: ['communicator', 'resolve_approval'], approvalAuthority: ['shell'] },
        { id: 'worker', tools: ['shell'] },
      ],
      rules: { shell: 'allow' },
      headless: { approve: 'deny' },
      script: `
replies:
  - { agent: lead, on: message, toolCalls: [{ name: communicator, input: { targetId: worker, message: "run it" } }] }
  - { agent: worker, on: message, toolCalls: [{ name: shell, input: { command: "echo hi $(touch PWNED)" } }] }
  - { agent: lead, on: tool-result, when: "apr-1", toolCalls: [{ name: resolve_approval, input: { requestId: apr-1, decision: approved, reason: "fine" } }] }
  - { agent: lead, on: tool-result, repeat: true, text: "lead done" }
  - { agent: lead, on: tool-error, repeat: true, text: "lead done" }
  - { agent: worker, on: tool-error, text: "refused" }
  - { agent: worker, on: tool-result, text: "ran" }
`,
    });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    await h.core.idle(sent.sessionId);
    assert.equal(existsSync(join(dir, 'PWNED')), false, 'the command ran');
    assert.deepEqual(eventsOf(h.events, 'approval-request').map((r) => r.approverId), ['user']);
    assert.deepEqual(eventsOf(h.events, 'approval-resolve').map((r) => r.decidedBy), ['headless']);
    await h.close();
  });
});

// git-internals-ask: "changing them always needs approval" — a hook in .git/hooks/ runs as you at
// your next commit. Its approver is `user`: a rule that names the user as approver is answered by
// a person, not by LLM triage (which would otherwise answer any ask).
test('LLM triage does not answer an ask whose rule names the user as approver (git-internals-ask)', async () => {
  await withTempDir(async (dir) => {
    const asked: string[] = [];
    const h = await startAppHarness({
      dir,
      config: { escalation: { llm: { enabled: true } } },
      agents: [{ id: 'worker', tools: ['file_write'] }],
      rules: { file_write: { decision: 'ask', id: 'git-internals-ask', reason: 'git can run code', approver: 'user' } },
      headless: { approve: 'deny' },
      triage: async (request) => { asked.push(String((request.input as { path?: string }).path)); return { approve: true, reasoning: 'a hook that lints' }; },
      script: `
replies:
  - { agent: worker, toolCalls: [{ name: file_write, input: { path: ".git/hooks/pre-commit", content: "#!/bin/sh\\ntouch PWNED\\n" } }] }
  - { agent: worker, on: tool-error, text: "refused" }
  - { agent: worker, on: tool-result, text: "written" }
`,
    });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'refused');
    assert.deepEqual(eventsOf(h.events, 'approval-resolve').map((r) => r.decidedBy), ['headless']);
    assert.deepEqual(asked, []);
    await h.close();
  });
});

test('the shipped git-internals-ask names the user as approver: only a person answers it', () => {
  const authorize = createAuthorizer({
    ruleSet: shippedRules(), workspaceRoot: '/ws', gitConfigPaths: () => [],
    getParticipant: (id) => (id === 'dev' ? { id, kind: 'agent', name: id, description: '', status: 'active', systemPrompt: 'x', provider: 'default', model: 'default', tools: ['file_write'], toolAuthorizations: {}, approvalAuthority: [] } : undefined),
  });
  const verdict = authorize({ toolName: 'file_write', input: { path: '.git/hooks/pre-commit', content: 'x' }, participantId: 'dev', sessionId: 's', chain: ['user', 'dev'] });
  assert.deepEqual([verdict.decision, verdict.ruleId, verdict.approver, personOnly(verdict)], ['ask', 'git-internals-ask', 'user', true]);
  const plain = authorize({ toolName: 'file_write', input: { path: 'notes.md', content: 'x' }, participantId: 'dev', sessionId: 's', chain: ['user', 'dev'] });
  assert.equal(personOnly(plain), false);
});

// A line Legion's parser cannot read ("cannot check this shell command safely": arithmetic, `case`,
// a comment) is not known to be plain words, and bash runs its `$(…)`: a person decides it too.
test('LLM triage never approves a shell line the parser cannot read', () =>
  triageNeverSees('echo hi $(touch PWNED) $((1+2))', 'harmless arithmetic'));
