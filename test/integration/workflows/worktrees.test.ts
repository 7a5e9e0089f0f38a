import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { startWorkflowHarness, type WorkflowEndEvent } from '../../helpers/workflow-harness';
import { makeRepo, userGit } from '../../unit/worktrees/helpers';

/** Parallel workflow steps that write work in worktrees by default (docs/worktrees.md#workflow-steps). */
const AGENTS = [
  { id: 'coder', tools: ['file_write'] },
  { id: 'reviewer', tools: ['file_read'] },
];

const WORKFLOW = `description: two implementers in parallel, then a review
steps:
  - { id: part-a, agent: coder, prompt: "implement part A" }
  - { id: part-b, agent: coder, prompt: "implement part B" }
  - { id: solo, agent: reviewer, prompt: "read along" }
  - { id: review, agent: reviewer, after: [part-a, part-b, solo], prompt: "review: {{steps.part-a.output}} || {{steps.part-b.output}}" }
`;

const SCRIPT = `
version: 1
replies:
  - { agent: coder, when: "part A", toolCalls: [{ name: file_write, input: { path: a.txt, content: "A\\n" } }] }
  - { agent: coder, when: "part B", toolCalls: [{ name: file_write, input: { path: b.txt, content: "B\\n" } }] }
  - { agent: coder, on: tool-result, text: "coded", repeat: true }
  - { agent: reviewer, when: "^read along", text: "read", repeat: true }
  - { agent: reviewer, when: "^review", text: "REVIEWED[{{lastText}}]", repeat: true }
`;

test('parallel steps whose agent writes get a worktree each; their merge requests are decided; the next step sees both outcomes', async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const h = await startWorkflowHarness({ dir, agents: AGENTS, script: SCRIPT, workflows: { duo: WORKFLOW }, headless: { approve: 'all' } });
    try {
      const started = await h.commands.start('duo', 'x');
      assert.ok(started.ok, started.ok ? '' : started.error);
      const end = (await h.waitFor((e) => e.type === 'workflow-end', 30_000)) as WorkflowEndEvent;
      assert.equal(end.status, 'done');
      const merges = h.events.filter((e) => e.type === 'approval-request' && e.toolName === 'merge').map((e) => (e as { sessionId: string }).sessionId).sort();
      assert.deepEqual(merges, ['session-user__coder__duo-part-a', 'session-user__coder__duo-part-b']);
      // Both merged into the workspace, uncommitted; each branch holds its step's work.
      assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'A\n');
      assert.equal(readFileSync(join(dir, 'b.txt'), 'utf8'), 'B\n');
      assert.equal(userGit(dir, ['show', 'legion/session-user__coder__duo-part-a:a.txt']), 'A\n');
      // The reader step was not isolated (its agent changes no file); the review step saw both merge outcomes.
      assert.equal(existsSync(join(dir, '.legion/worktrees/session-user__reviewer__duo-solo')), false);
      const review = h.core.history('session-user__reviewer__duo-review');
      const asked = JSON.stringify(review[0]);
      assert.match(asked, /coded\\n\\n\[worktree\] merged into the workspace \(uncommitted\): 1 file changed.*a\.txt/);
      assert.match(asked, /\[worktree\] merged into the workspace \(uncommitted\): 1 file changed.*b\.txt/);
    } finally {
      await h.stop();
    }
  });
});

test('the same workflow in a workspace that is not a git repository runs without isolation', async () => {
  await withTempDir(async (dir) => {
    const h = await startWorkflowHarness({ dir, agents: AGENTS, script: SCRIPT, workflows: { duo: WORKFLOW }, headless: { approve: 'all' } });
    try {
      const started = await h.commands.start('duo', 'x');
      assert.ok(started.ok);
      const end = (await h.waitFor((e) => e.type === 'workflow-end', 30_000)) as WorkflowEndEvent;
      assert.equal(end.status, 'done');
      assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'A\n');
      assert.equal(h.events.some((e) => e.type === 'approval-request' && e.toolName === 'merge'), false);
    } finally {
      await h.stop();
    }
  });
});

test('in a git workspace, a worktree that cannot be made fails the step: the work never runs unisolated instead', async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    // A file where the worktrees' folder must go: making any worktree fails (not "not a repository").
    mkdirSync(join(dir, '.legion'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, '.legion', 'worktrees'), 'in the way\n', { mode: 0o600 });
    const h = await startWorkflowHarness({ dir, agents: AGENTS, script: SCRIPT, workflows: { duo: WORKFLOW }, headless: { approve: 'all' } });
    try {
      const started = await h.commands.start('duo', 'x');
      assert.ok(started.ok, started.ok ? '' : started.error);
      const end = (await h.waitFor((e) => e.type === 'workflow-end', 30_000)) as WorkflowEndEvent;
      assert.notEqual(end.status, 'done');
      const failedSteps = h.events.filter((e) => e.type === 'workflow-step-end' && (e as { status?: string }).status === 'failed').map((e) => (e as { stepId: string }).stepId).sort();
      assert.deepEqual(failedSteps, ['part-a', 'part-b']);
      assert.equal(existsSync(join(dir, 'a.txt')), false, 'part A wrote nothing into the workspace');
      assert.equal(existsSync(join(dir, 'b.txt')), false, 'part B wrote nothing into the workspace');
    } finally {
      await h.stop();
    }
  });
});
