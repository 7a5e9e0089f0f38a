import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { textOf } from '../../../src/model/message';
import type { PriceOf } from '../../../src/runtime/ports';
import { withTempDir } from '../../helpers/tmp';
import { startWorkflowHarness, type WorkflowEndEvent } from '../../helpers/workflow-harness';

/** Workflows over the real core with the faux provider (docs/workflows.md, "Execution"). */

const AGENTS = [{ id: 'planner' }, { id: 'coder' }, { id: 'reviewer' }];

const FANOUT = `description: two reviews then a summary
steps:
  - { id: a, agent: reviewer, prompt: "review A of {{input}}" }
  - { id: b, agent: coder, prompt: "review B of {{input}}" }
  - { id: sum, agent: planner, after: [a, b], prompt: "summarize: {{steps.a.output}} + {{steps.b.output}}" }
`;

const SCRIPT = `
version: 1
replies:
  - { agent: reviewer, when: "^review A", text: "A-notes", delayMs: 60, repeat: true }
  - { agent: coder, when: "^review B", text: "B-notes", delayMs: 60, repeat: true }
  - { agent: planner, when: "^summarize", text: "summary of [{{lastText}}]", repeat: true }
  - { agent: planner, when: "^plan", text: "PLAN({{lastText}})", repeat: true }
  - { agent: coder, when: "^implement", text: "CODE({{lastText}})", repeat: true }
  - { agent: reviewer, when: "^check", text: "REVIEW({{lastText}})", repeat: true }
  - { agent: coder, when: "^boom", text: "x", error: { message: "500 upstream exploded", status: 500 }, repeat: true }
  - { agent: reviewer, when: "^slow", text: "slow done", delayMs: 3000, repeat: true }
  - { agent: coder, when: "^slow", text: "slow done", delayMs: 3000, repeat: true }
  - { agent: planner, when: "^costly", text: "spent", usage: { inputTokens: 300000, outputTokens: 100000 }, repeat: true }
`;

const waitEnd = (h: { waitFor: (m: (e: never) => boolean, t?: number) => Promise<unknown> }) =>
  h.waitFor(((e: { type: string }) => e.type === 'workflow-end') as never, 15000) as Promise<WorkflowEndEvent>;

test('fan-out: independent steps overlap (both start before either ends); the join step gets both outputs', async () => {
  await withTempDir(async (dir) => {
    const h = await startWorkflowHarness({ dir, agents: AGENTS, script: SCRIPT, workflows: { fan: FANOUT } });
    try {
      const started = await h.service.start('fan', 'the PR');
      assert.ok(started.ok);
      const result = await started.run.done;
      assert.equal(result.status, 'done');
      const trace = h.trace();
      const at = (s: string) => trace.indexOf(s);
      assert.ok(at('start:a') < at('end:a:done') && at('start:b') < at('end:a:done'), trace.join(' '));
      assert.ok(at('start:a') < at('end:b:done') && at('start:b') < at('end:b:done'), trace.join(' '));
      assert.ok(at('start:sum') > at('end:a:done') && at('start:sum') > at('end:b:done'), trace.join(' '));
      assert.equal(result.steps.sum!.output, 'summary of [summarize: A-notes + B-notes]');
      assert.equal(result.steps.a!.sessionId, 'session-user__reviewer__fan-a');
      assert.ok(h.events.some((e) => e.type === 'session-open' && e.sessionId === 'session-user__coder__fan-b'));
      // Progress on disk, atomically written.
      const saved = JSON.parse(await readFile(join(h.layout.runDir(h.core.runId), 'workflows', 'fan-1.json'), 'utf8'));
      assert.equal(saved.status, 'done');
      assert.deepEqual(Object.values(saved.steps).map((s) => (s as { status: string }).status), ['done', 'done', 'done']);
      assert.deepEqual(h.events.filter((e) => e.type === 'workflow-start').map((e) => e.type === 'workflow-start' && e.steps), [['a', 'b', 'sum']]);
    } finally {
      await h.stop();
    }
  });
});

test('pipeline: each step\'s prompt carries the previous output; inputs and defaults fill in', async () => {
  await withTempDir(async (dir) => {
    const wf = `inputs:\n  lang: { default: rust }\nsteps:
  - { id: plan, agent: planner, prompt: "plan {{input}} in {{inputs.lang}}" }
  - { id: impl, agent: coder, after: [plan], prompt: "implement {{steps.plan.output}}" }
  - { id: rev, agent: reviewer, after: [impl], prompt: "check {{steps.impl.output}}" }
`;
    const h = await startWorkflowHarness({ dir, agents: AGENTS, script: SCRIPT, workflows: { pipe: wf } });
    try {
      const started = await h.commands.startWorkflow('pipe', 'a parser', { lang: 'go' });
      assert.ok(started.ok);
      const end = await waitEnd(h as never);
      assert.equal(end.status, 'done');
      assert.deepEqual(h.trace(), ['start:plan', 'end:plan:done', 'start:impl', 'end:impl:done', 'start:rev', 'end:rev:done', 'workflow-end:done']);
      const review = h.core.history('session-user__reviewer__pipe-rev');
      assert.equal(textOf(review[0]!), 'check CODE(implement PLAN(plan a parser in go))');
      assert.equal(textOf(review.at(-1)!), 'REVIEW(check CODE(implement PLAN(plan a parser in go)))');
      const refused = await h.commands.startWorkflow('pipe', 'x', { langg: 'go' });
      assert.deepEqual(refused, { ok: false, error: 'workflow pipe has no input "langg" (did you mean "lang"?) (inputs: lang)' });
      assert.match((await h.commands.startWorkflow('nope', 'x') as { error: string }).error, /^no workflow "nope"/);
    } finally {
      await h.stop();
    }
  });
});

test('a failing step stops its dependants only; the workflow reports which', async () => {
  await withTempDir(async (dir) => {
    const wf = `steps:
  - { id: bad, agent: coder, prompt: "boom" }
  - { id: good, agent: planner, prompt: "plan it" }
  - { id: after-bad, agent: reviewer, after: [bad], prompt: "check {{steps.bad.output}}" }
  - { id: after-after, agent: planner, after: [after-bad], prompt: "plan more" }
  - { id: after-good, agent: reviewer, after: [good], prompt: "check {{steps.good.output}}" }
`;
    const h = await startWorkflowHarness({ dir, agents: AGENTS, script: SCRIPT, workflows: { mixed: wf } });
    try {
      assert.ok((await h.commands.startWorkflow('mixed', '')).ok);
      const end = await waitEnd(h as never);
      assert.equal(end.status, 'failed');
      assert.deepEqual(end.failed, ['bad']);
      assert.deepEqual(end.skipped, ['after-bad', 'after-after']);
      const ends = h.events.filter((e) => e.type === 'workflow-step-end');
      const of = (id: string) => ends.find((e) => e.type === 'workflow-step-end' && e.stepId === id) as { status: string; error?: string };
      assert.equal(of('after-good').status, 'done');
      assert.match(of('bad').error!, /500 upstream exploded/);
      assert.equal(of('after-bad').error, 'not run: bad failed');
      assert.equal(of('after-after').error, 'not run: after-bad was skipped');
      assert.equal(h.core.history('session-user__reviewer__mixed-after-bad').length, 0);
    } finally {
      await h.stop();
    }
  });
});

test('cancel: running steps are cancelled, the rest skipped, the workflow ends cancelled', async () => {
  await withTempDir(async (dir) => {
    const wf = `steps:
  - { id: s1, agent: reviewer, prompt: "slow one" }
  - { id: s2, agent: coder, prompt: "slow two" }
  - { id: last, agent: planner, after: [s1, s2], prompt: "plan" }
`;
    const h = await startWorkflowHarness({ dir, agents: AGENTS, script: SCRIPT, workflows: { slow: wf } });
    try {
      const started = await h.commands.startWorkflow('slow', '');
      assert.ok(started.ok);
      await h.waitFor((e) => e.type === 'workflow-step-start' && e.stepId === 's2');
      assert.deepEqual(await h.commands.startWorkflow('slow', ''), { ok: false, error: 'workflow slow is already running (slow-1); wait for it or cancel it' });
      await h.waitFor((e) => e.type === 'agent-status' && e.sessionId === 'session-user__coder__slow-s2' && e.status === 'thinking');
      assert.equal(h.commands.cancelWorkflow(started.workflowId), true);
      const end = await waitEnd(h as never);
      assert.equal(end.status, 'cancelled');
      assert.deepEqual(end.failed.sort(), ['s1', 's2']);
      assert.deepEqual(end.skipped, ['last']);
      assert.deepEqual(h.trace().filter((t) => t.startsWith('end:')).sort(), ['end:last:skipped', 'end:s1:cancelled', 'end:s2:cancelled']);
      assert.equal(h.commands.cancelWorkflow(started.workflowId), false);
    } finally {
      await h.stop();
    }
  });
});

test('restart mid-workflow: finished steps are not rerun, the running one resumes, the rest follow', async () => {
  await withTempDir(async (dir) => {
    const wf = `steps:
  - { id: first, agent: planner, prompt: "plan {{input}}" }
  - { id: second, agent: coder, after: [first], prompt: "slow {{steps.first.output}}" }
  - { id: third, agent: reviewer, after: [second], prompt: "check {{steps.second.output}}" }
`;
    const h1 = await startWorkflowHarness({ dir, agents: AGENTS, script: SCRIPT, workflows: { resumable: wf } });
    assert.ok((await h1.commands.startWorkflow('resumable', 'X')).ok);
    await h1.waitFor((e) => e.type === 'agent-status' && e.sessionId === 'session-user__coder__resumable-second' && e.status === 'thinking');
    await h1.stop();
    const saved = JSON.parse(await readFile(join(h1.layout.runDir(h1.core.runId), 'workflows', 'resumable-1.json'), 'utf8'));
    assert.equal(saved.status, 'running');
    assert.equal(saved.steps.first.status, 'done');
    assert.equal(saved.steps.second.status, 'running');

    // The second process: the coder is fast now.
    const fast = SCRIPT.replace('{ agent: coder, when: "^slow", text: "slow done", delayMs: 3000, repeat: true }', '{ agent: coder, text: "resumed ok", repeat: true }');
    const h2 = await startWorkflowHarness({ dir, script: fast });
    try {
      const { runs } = await h2.service.resume();
      assert.equal(runs.length, 1);
      const result = await runs[0]!.done;
      assert.equal(result.status, 'done');
      assert.deepEqual(h2.trace(), ['start:second', 'end:second:done', 'start:third', 'end:third:done', 'workflow-end:done']);
      assert.ok(h2.events.some((e) => e.type === 'workflow-step-start' && e.stepId === 'second' && e.resumed));
      assert.ok(h2.core.history('session-user__coder__resumable-second').some((m) => m.role === 'user' && textOf(m).startsWith('(Legion restarted')));
      // `first` ran once: its session holds one prompt and one answer.
      assert.equal(h2.core.history('session-user__planner__resumable-first').length, 2);
      const third = h2.core.history('session-user__reviewer__resumable-third');
      assert.equal(textOf(third[0]!), 'check resumed ok');
    } finally {
      await h2.stop();
    }
  });
});

const PRICE: PriceOf = (u) => (u.inputTokens + u.outputTokens) / 1e6;

test('budget reached mid-workflow, headless: no new step starts, the request is rejected as headless, status budget', async () => {
  await withTempDir(async (dir) => {
    const wf = `budgetUsd: 0.25\nsteps:
  - { id: spend, agent: planner, prompt: "costly" }
  - { id: also, agent: reviewer, prompt: "check cheap" }
  - { id: next, agent: coder, after: [spend, also], prompt: "implement" }
`;
    const h = await startWorkflowHarness({ dir, agents: AGENTS, script: SCRIPT, workflows: { capped: wf }, priceOf: PRICE, headless: { approve: 'all' } });
    try {
      assert.ok((await h.commands.startWorkflow('capped', '')).ok);
      const end = await waitEnd(h as never);
      assert.equal(end.status, 'budget');
      assert.ok(end.spentUsd >= 0.4, String(end.spentUsd));
      assert.deepEqual(end.skipped, ['next']);
      assert.match(end.error!, /^budget reached: workflow capped spent \$0\.4\d+ of its \$0\.25 budgetUsd/);
      const request = h.events.find((e) => e.type === 'approval-request' && e.toolName === 'budget');
      assert.ok(request && request.type === 'approval-request');
      assert.deepEqual({ ...(request.input as object), spentUsd: undefined }, { budget: 'workflowUsd', workflow: 'capped', workflowId: 'capped-1', spentUsd: undefined, limit: 0.25, raiseBy: 0.25 });
      assert.ok(h.events.some((e) => e.type === 'approval-resolve' && e.requestId === request.requestId && e.decidedBy === 'headless' && e.decision === 'rejected'));
      assert.equal(h.core.history('session-user__coder__capped-next').length, 0);
    } finally {
      await h.stop();
    }
  });
});

test('budget reached with a user: approving the request raises the limit and the next step runs', async () => {
  await withTempDir(async (dir) => {
    const wf = `budgetUsd: 0.25\nsteps:
  - { id: spend, agent: planner, prompt: "costly" }
  - { id: next, agent: coder, after: [spend], prompt: "implement" }
`;
    const h = await startWorkflowHarness({ dir, agents: AGENTS, script: SCRIPT, workflows: { capped: wf }, priceOf: PRICE, config: { budgets: { raiseBy: 2 } } });
    try {
      assert.ok((await h.commands.startWorkflow('capped', '')).ok);
      const request = await h.waitFor((e) => e.type === 'approval-request' && e.toolName === 'budget');
      assert.ok(request.type === 'approval-request');
      assert.ok(!h.events.some((e) => e.type === 'workflow-step-start' && e.stepId === 'next'), 'no step starts while the request waits');
      assert.deepEqual(h.core.resolveApprovals([request.requestId], 'approved'), { ok: true });
      const end = await waitEnd(h as never);
      assert.equal(end.status, 'done');
      assert.equal(h.trace().at(-2), 'end:next:done');
    } finally {
      await h.stop();
    }
  });
});
