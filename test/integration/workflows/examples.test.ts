import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { textOf } from '../../../src/model/message';
import { withTempDir } from '../../helpers/tmp';
import { startWorkflowHarness } from '../../helpers/workflow-harness';

/**
 * The shipped workflows (config/workflows/, docs/workflows.md#the-shipped-examples) in the real
 * composition root with the default collective only (ur-agent, resource-agent): they validate
 * against it, and a faux model that follows their prompts runs each one to the end.
 */

test('the shipped workflows are listed without error for the default collective', async () => {
  await withTempDir(async (dir) => {
    const h = await startWorkflowHarness({ dir });
    try {
      assert.deepEqual(h.registry.list().filter((p) => p.kind === 'agent').map((p) => p.id).sort(), ['resource-agent', 'ur-agent']);
      const listed = await h.commands.list();
      assert.deepEqual(listed.map((w) => [w.name, w.source, w.error ?? null]), [['parallel-implement', 'shipped', null], ['parallel-review', 'shipped', null], ['plan-implement-review', 'shipped', null]]);
      const byName = Object.fromEntries(listed.map((w) => [w.name, w]));
      assert.deepEqual(byName['plan-implement-review']!.steps, ['plan', 'implement', 'review']);
      assert.deepEqual(byName['parallel-review']!.steps, ['setup', 'correctness', 'security', 'tests', 'summary']);
      assert.deepEqual(byName['parallel-review']!.inputs, ['focus']);
      assert.deepEqual(byName['parallel-implement']!.steps, ['setup', 'part-a', 'part-b', 'review']);
      assert.deepEqual(byName['parallel-implement']!.inputs, ['part_a', 'part_b']);
      assert.ok(byName['parallel-review']!.budgetUsd && byName['plan-implement-review']!.budgetUsd);
    } finally {
      await h.stop();
    }
  });
});

// A model that does what parallel-review's prompts ask: resource-agent spawns `reviewer`, each
// review delegates under the session name its prompt names, the summary merges.
const REVIEW_SCRIPT = `
version: 1
replies:
  - agent: resource-agent
    when: 'id "reviewer" exists'
    toolCalls:
      - name: spawn_agent
        input: { id: reviewer, name: Reviewer, systemPrompt: "You review code. Findings with file:line.", tools: [file_read, file_list, glob, grep, communicator, list_participants] }
  - { agent: resource-agent, on: tool-result, text: "reviewer created, read-only" }
  - { agent: ur-agent, when: "^Merge three reviews", text: "REPORT: 3 findings. Verdict: needs changes.", repeat: true }
  - { agent: ur-agent, on: tool-result, text: "FOUND {{lastText}}", repeat: true }
  - { agent: ur-agent, on: message, when: 'sessionName\\s+"review-correctness"', toolCalls: [{ name: communicator, input: { targetId: reviewer, sessionName: review-correctness, message: "correctness of src/parser" } }] }
  - { agent: ur-agent, on: message, when: 'sessionName\\s+"review-security"', toolCalls: [{ name: communicator, input: { targetId: reviewer, sessionName: review-security, message: "security of src/parser" } }] }
  - { agent: ur-agent, on: message, when: 'sessionName\\s+"review-tests"', toolCalls: [{ name: communicator, input: { targetId: reviewer, sessionName: review-tests, message: "tests of src/parser" } }] }
  - { agent: reviewer, when: "^correctness", text: "C: src/parser.ts:10 off by one", repeat: true }
  - { agent: reviewer, when: "^security", text: "S: src/parser.ts:22 unchecked path", repeat: true }
  - { agent: reviewer, when: "^tests", text: "T: parser.test.ts misses the empty input", repeat: true }
`;

test('parallel-review runs with the default collective: setup creates reviewer, three reviews delegate in their own sessions, the summary gets all three', async () => {
  await withTempDir(async (dir) => {
    const h = await startWorkflowHarness({ dir, script: REVIEW_SCRIPT });
    try {
      const started = await h.service.start('parallel-review', 'src/parser', { focus: 'error handling' });
      assert.ok(started.ok, started.ok ? '' : started.error);
      const end = await started.run.done;
      assert.equal(end.status, 'done', JSON.stringify(end.steps));
      assert.equal(h.registry.get('reviewer')?.kind, 'agent');
      assert.deepEqual((h.registry.get('reviewer') as { tools: string[] }).tools.slice().sort(), ['communicator', 'file_list', 'file_read', 'glob', 'grep', 'list_participants']);
      // Three delegations, three sessions: none queued behind another's conversation.
      for (const angle of ['correctness', 'security', 'tests']) {
        const prompt = textOf(h.core.history(`session-user__ur-agent__parallel-review-${angle}`)[0]!);
        assert.match(prompt, /review src\/parser/);
        assert.match(prompt, /keep in mind: error handling/);
        assert.equal(h.core.history(`session-ur-agent__reviewer__review-${angle}`).length, 2, angle);
      }
      const summary = textOf(h.core.history('session-user__ur-agent__parallel-review-summary')[0]!);
      assert.match(summary, /Correctness review:\nFOUND .*src\/parser\.ts:10 off by one/);
      assert.match(summary, /Security review:\nFOUND .*src\/parser\.ts:22 unchecked path/);
      assert.match(summary, /Tests review:\nFOUND .*misses the empty input/);
      assert.equal(end.steps.summary!.output, 'REPORT: 3 findings. Verdict: needs changes.');
    } finally {
      await h.stop();
    }
  });
});

const PIPELINE_SCRIPT = `
version: 1
replies:
  - { agent: ur-agent, when: "^Plan this change", text: "1. src/cli/args.ts: add --verbose. Test: args.test.ts", repeat: true }
  - { agent: ur-agent, when: "^Implement this plan", text: "Changed src/cli/args.ts; 12 tests pass", repeat: true }
  - { agent: ur-agent, when: "^Review a change", text: "ready: no findings", repeat: true }
`;

test('plan-implement-review runs with the default collective: the review sees the request, the plan and the report', async () => {
  await withTempDir(async (dir) => {
    const h = await startWorkflowHarness({ dir, script: PIPELINE_SCRIPT });
    try {
      const started = await h.service.start('plan-implement-review', 'add a --verbose flag');
      assert.ok(started.ok, started.ok ? '' : started.error);
      const end = await started.run.done;
      assert.equal(end.status, 'done', JSON.stringify(end.steps));
      assert.deepEqual(h.trace(), ['start:plan', 'end:plan:done', 'start:implement', 'end:implement:done', 'start:review', 'end:review:done', 'workflow-end:done']);
      const implement = textOf(h.core.history('session-user__ur-agent__plan-implement-review-implement')[0]!);
      assert.match(implement, /The request: add a --verbose flag\n\nThe plan:\n1\. src\/cli\/args\.ts: add --verbose/);
      const review = textOf(h.core.history('session-user__ur-agent__plan-implement-review-review')[0]!);
      assert.match(review, /The request: add a --verbose flag/);
      assert.match(review, /The plan:\n1\. src\/cli\/args\.ts/);
      assert.match(review, /The implementer's report:\nChanged src\/cli\/args\.ts; 12 tests pass/);
      assert.equal(end.steps.review!.output, 'ready: no findings');
    } finally {
      await h.stop();
    }
  });
});
