import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { startWorkflowHarness } from '../../helpers/workflow-harness';
import { eventsOf } from '../../helpers/runtime-assert';
import { makeRepo } from '../../unit/worktrees/helpers';

/**
 * The shipped `parallel-implement` (docs/worktrees.md#merge-authority): ur-agent has the reviewer
 * delegate each part to an isolated implementer, so each merge request is raised to the reviewer. Holding `merge` authority
 * (granted by the user's own agent file) it reads the diff and decides; the review sees both outcomes.
 * The same grant in a workspace agent file (a repository's) grants nothing: the requests reach the user.
 */
const REVIEWER_FILE = `---
name: reviewer
description: Reviews changes and decides merge requests
tools: file_read, file_list, glob, grep, communicator, list_participants, resolve_approval
approvalAuthority: [merge]
---
You review changes. Approve a merge request only when its diff does what was asked.
`;

const IMPLEMENTER = { id: 'implementer', tools: ['file_read', 'file_write', 'file_edit', 'communicator', 'list_participants'], isolation: 'worktree' as const };

const decide = (id: string, file: string, decision: 'approved' | 'rejected', reason: string): string =>
  `  - { agent: reviewer, on: tool-result, when: "- ${id}: merge[^\\\\n]*${file}", toolCalls: [{ name: resolve_approval, input: { requestId: ${id}, decision: ${decision}, reason: "${reason}" } }] }`;

const SCRIPT = `
version: 1
replies:
  - { agent: resource-agent, when: "Make sure two agents exist", text: "both exist, unchanged" }
  - { agent: ur-agent, on: message, when: 'sessionName\\s+"review-a"', toolCalls: [{ name: communicator, input: { targetId: reviewer, sessionName: review-a, message: "have part A done" } }] }
  - { agent: ur-agent, on: message, when: 'sessionName\\s+"review-b"', toolCalls: [{ name: communicator, input: { targetId: reviewer, sessionName: review-b, message: "have part B done" } }] }
  - { agent: ur-agent, on: message, when: "^Two parts", toolCalls: [{ name: communicator, input: { targetId: reviewer, sessionName: review, message: "review both" } }] }
  - { agent: ur-agent, on: tool-result, text: "{{lastText}}", repeat: true }
  - { agent: reviewer, on: message, when: "part A", toolCalls: [{ name: communicator, input: { targetId: implementer, sessionName: impl-a, isolation: worktree, message: "part A" } }] }
  - { agent: reviewer, on: message, when: "part B", toolCalls: [{ name: communicator, input: { targetId: implementer, sessionName: impl-b, isolation: worktree, message: "part B" } }] }
  - { agent: reviewer, on: message, when: "review both", text: "REVIEWED", repeat: true }
  - { agent: implementer, on: message, when: "part A", toolCalls: [{ name: file_write, input: { path: a.txt, content: "A\\n" } }] }
  - { agent: implementer, on: message, when: "part B", toolCalls: [{ name: file_write, input: { path: b.txt, content: "B\\n" } }] }
  - { agent: implementer, on: tool-result, text: "implemented", repeat: true }
${decide('apr-1', 'a\\\\.txt', 'approved', 'does part A')}
${decide('apr-2', 'a\\\\.txt', 'approved', 'does part A')}
${decide('apr-1', 'b\\\\.txt', 'rejected', 'b.txt is not what part B asked')}
${decide('apr-2', 'b\\\\.txt', 'rejected', 'b.txt is not what part B asked')}
  - { agent: reviewer, on: tool-result, when: "reply from implementer", text: "PART {{lastText}}", repeat: true }
  - { agent: reviewer, on: tool-result, when: "(approved|rejected) apr-", text: "decided, waiting for the reply", repeat: true }
`;

const start = async (dir: string, reviewerFile: 'user' | 'workspace') => {
  await makeRepo(dir);
  const folder = reviewerFile === 'user' ? join(dir, '.legion', 'test-home', '.config', 'legion', 'agents') : join(dir, '.legion', 'agents');
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  writeFileSync(join(folder, 'reviewer.md'), REVIEWER_FILE, { mode: 0o600 });
  return startWorkflowHarness({ dir, agents: [IMPLEMENTER], script: SCRIPT, headless: { approve: 'all' } });
};

test('parallel-implement: a reviewer the user granted merge authority decides both merge requests; the review sees both outcomes; the user decides nothing', async () => {
  await withTempDir(async (dir) => {
    const h = await start(dir, 'user');
    try {
      const started = await h.service.start('parallel-implement', 'the goal', { part_a: 'write a.txt', part_b: 'write b.txt' });
      assert.ok(started.ok, started.ok ? '' : started.error);
      const end = await started.run.done;
      assert.equal(end.status, 'done', JSON.stringify(end.steps));
      const requests = eventsOf(h.events, 'approval-request').filter((e) => e.toolName === 'merge');
      assert.deepEqual(requests.map((r) => r.approverId), ['reviewer', 'reviewer'], 'each merge request was raised to the reviewer, its caller');
      const resolved = eventsOf(h.events, 'approval-resolve').map((e) => `${e.decision} ${e.decidedBy}`).sort();
      assert.deepEqual(resolved, ['approved agent:reviewer', 'rejected agent:reviewer'], 'decided by the reviewer, not headless');
      assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'A\n', 'the approved part merged');
      assert.equal(existsSync(join(dir, 'b.txt')), false, 'the rejected part did not');
      const review = JSON.stringify(h.core.history('session-user__ur-agent__parallel-implement-review')[0]);
      assert.match(review, /Part A: [^]*\[worktree\] merged into the workspace \(uncommitted\): 1 file changed/);
      assert.match(review, /Part B: [^]*\[worktree\] merge rejected by agent:reviewer: b\.txt is not what part B asked/);
    } finally {
      await h.stop();
    }
  });
});

test('parallel-implement: the same grant in a workspace agent file grants nothing; resource-agent cannot grant it either; the requests reach the user', async () => {
  await withTempDir(async (dir) => {
    const h = await start(dir, 'workspace');
    try {
      assert.deepEqual(h.registry.get('reviewer')?.approvalAuthority, [], 'a repository cannot make an approver');
      const granted = await h.registry.spawn('resource-agent', { id: 'judge', name: 'Judge', systemPrompt: 'You judge.', tools: ['communicator'], approvalAuthority: ['merge'] });
      assert.equal(granted.ok, false);
      assert.match(granted.ok ? '' : granted.error, /cannot grant approvalAuthority beyond your own: merge/);
      const started = await h.service.start('parallel-implement', 'the goal', { part_a: 'write a.txt', part_b: 'write b.txt' });
      assert.ok(started.ok, started.ok ? '' : started.error);
      const end = await started.run.done;
      assert.equal(end.status, 'done', JSON.stringify(end.steps));
      const requests = eventsOf(h.events, 'approval-request').filter((e) => e.toolName === 'merge');
      assert.deepEqual(requests.map((r) => r.approverId), ['user', 'user']);
      assert.deepEqual(eventsOf(h.events, 'approval-resolve').map((e) => `${e.decision} ${e.decidedBy}`), ['approved headless', 'approved headless']);
      assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'A\n');
      assert.equal(readFileSync(join(dir, 'b.txt'), 'utf8'), 'B\n');
    } finally {
      await h.stop();
    }
  });
});
