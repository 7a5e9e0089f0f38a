import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { textOf } from '../../../src/model/message';
import type { Provider } from '../../../src/providers/types';
import { createFauxProvider, parseFauxScript } from '../../../src/providers/faux';
import { withTempDir } from '../../helpers/tmp';
import { startWorkflowHarness, type WorkflowEndEvent } from '../../helpers/workflow-harness';

/** Workflows over the real composition root (composeApp, test/helpers/app-harness.ts) with the faux provider (docs/workflows.md, "Execution"). */

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
  - { agent: reviewer, when: "^review A", text: "A-notes", repeat: true }
  - { agent: coder, when: "^review B", text: "B-notes", repeat: true }
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

/**
 * The faux provider behind a gate: the first request of each of `agents` waits until every one
 * of them has a request in flight. Steps that ran one after another would never all be in
 * flight at once, so the gate would never open and the test would fail (no timing threshold:
 * the order of events proves the overlap).
 */
function overlapGate(script: string, agents: readonly string[]): { provider: Provider; inFlight(): string[] } {
  const parsed = parseFauxScript(script, 'test-script.yaml');
  if (!parsed.ok) throw new Error(parsed.error);
  const inner = createFauxProvider({ script: parsed.script });
  const arrived = new Set<string>();
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    inFlight: () => [...arrived],
    provider: {
      id: inner.id,
      async *stream(request, signal) {
        const who = request.meta?.participantId;
        if (who && agents.includes(who) && (request.meta?.purpose ?? 'turn') === 'turn' && !arrived.has(who)) {
          arrived.add(who);
          if (arrived.size === agents.length) open();
          // A shutdown (the test failing) aborts the wait.
          await Promise.race([opened, new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))]);
        }
        yield* inner.stream(request, signal);
      },
    },
  };
}

test('fan-out: independent steps overlap (each one\'s model call waits for the other\'s); the join step gets both outputs', async () => {
  await withTempDir(async (dir) => {
    const gate = overlapGate(SCRIPT, ['reviewer', 'coder']);
    const h = await startWorkflowHarness({ dir, agents: AGENTS, provider: gate.provider, workflows: { fan: FANOUT } });
    try {
      const started = await h.service.start('fan', 'the PR');
      assert.ok(started.ok, started.ok ? '' : started.error);
      const end = await Promise.race([
        started.run.done,
        h.waitFor((e) => e.type === 'workflow-end', 15000).then(() => started.run.done, () => assert.fail(`the steps did not overlap: only ${gate.inFlight().join(', ') || 'no'} step(s) reached the model; trace ${h.trace().join(' ')}`)),
      ]);
      assert.equal(end.status, 'done');
      assert.deepEqual(gate.inFlight().sort(), ['coder', 'reviewer']);
      const trace = h.trace();
      const at = (s: string) => trace.indexOf(s);
      assert.ok(at('start:a') < at('end:a:done') && at('start:b') < at('end:a:done'), trace.join(' '));
      assert.ok(at('start:a') < at('end:b:done') && at('start:b') < at('end:b:done'), trace.join(' '));
      assert.ok(at('start:sum') > at('end:a:done') && at('start:sum') > at('end:b:done'), trace.join(' '));
      assert.equal(end.steps.sum!.output, 'summary of [summarize: A-notes + B-notes]');
      assert.equal(end.steps.a!.sessionId, 'session-user__reviewer__fan-a');
      // Each step is a user turn in `user → <agent> · <workflow>-<step>`: its lane opens, its prompt is the user's message.
      assert.ok(h.events.some((e) => e.type === 'session-open' && e.sessionId === 'session-user__coder__fan-b'));
      assert.equal(textOf(h.core.history('session-user__coder__fan-b')[0]!), 'review B of the PR');
      assert.equal(h.core.history('session-user__coder__fan-b')[0]!.role, 'user');
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
      const started = await h.commands.start('pipe', 'a parser', { lang: 'go' });
      assert.ok(started.ok);
      const end = await waitEnd(h as never);
      assert.equal(end.status, 'done');
      assert.deepEqual(h.trace(), ['start:plan', 'end:plan:done', 'start:impl', 'end:impl:done', 'start:rev', 'end:rev:done', 'workflow-end:done']);
      // The workflow's output (the last step's) rides on workflow-end, for an attached `legion run`.
      assert.equal(end.output, 'REVIEW(check CODE(implement PLAN(plan a parser in go)))');
      const review = h.core.history('session-user__reviewer__pipe-rev');
      assert.equal(textOf(review[0]!), 'check CODE(implement PLAN(plan a parser in go))');
      assert.equal(textOf(review.at(-1)!), 'REVIEW(check CODE(implement PLAN(plan a parser in go)))');
      const refused = await h.commands.start('pipe', 'x', { langg: 'go' });
      assert.deepEqual(refused, { ok: false, error: 'workflow pipe has no input "langg" (did you mean "lang"?) (inputs: lang)' });
      assert.match((await h.commands.start('nope', 'x') as { error: string }).error, /^no workflow "nope"/);
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
      assert.ok((await h.commands.start('mixed', '')).ok);
      const end = await waitEnd(h as never);
      assert.equal(end.status, 'failed');
      assert.deepEqual(end.failed, ['bad']);
      assert.deepEqual(end.skipped, ['after-bad', 'after-after']);
      assert.equal(end.output, undefined, 'only a done workflow has an output');
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
      const started = await h.commands.start('slow', '');
      assert.ok(started.ok);
      await h.waitFor((e) => e.type === 'workflow-step-start' && e.stepId === 's2');
      assert.deepEqual(await h.commands.start('slow', ''), { ok: false, error: 'workflow slow is already running (slow-1); wait for it or cancel it' });
      await h.waitFor((e) => e.type === 'agent-status' && e.sessionId === 'session-user__coder__slow-s2' && e.status === 'thinking');
      assert.equal(h.commands.cancel(started.workflowId), true);
      const end = await waitEnd(h as never);
      assert.equal(end.status, 'cancelled');
      assert.deepEqual(end.failed.sort(), ['s1', 's2']);
      assert.deepEqual(end.skipped, ['last']);
      assert.deepEqual(h.trace().filter((t) => t.startsWith('end:')).sort(), ['end:last:skipped', 'end:s1:cancelled', 'end:s2:cancelled']);
      assert.equal(h.commands.cancel(started.workflowId), false);
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
    assert.ok((await h1.commands.start('resumable', 'X')).ok);
    await h1.waitFor((e) => e.type === 'agent-status' && e.sessionId === 'session-user__coder__resumable-second' && e.status === 'thinking');
    await h1.stop();
    const saved = JSON.parse(await readFile(join(h1.layout.runDir(h1.core.runId), 'workflows', 'resumable-1.json'), 'utf8'));
    assert.equal(saved.status, 'running');
    assert.equal(saved.steps.first.status, 'done');
    assert.equal(saved.steps.second.status, 'running');

    // The second process: the coder is fast now.
    const fast = SCRIPT.replace('{ agent: coder, when: "^slow", text: "slow done", delayMs: 3000, repeat: true }', '{ agent: coder, text: "resumed ok", repeat: true }');
    const h2 = await startWorkflowHarness({ dir, agents: AGENTS, script: fast });
    try {
      await h2.resumeWorkflows();
      const runs = h2.service.active();
      assert.deepEqual(runs.map((r) => r.workflowId), ['resumable-1']);
      const result = await runs[0]!.done;
      assert.equal(result.status, 'done');
      assert.deepEqual(h2.trace(), ['start:second', 'end:second:done', 'start:third', 'end:third:done', 'workflow-end:done']);
      assert.ok(h2.events.some((e) => e.type === 'workflow-step-start' && e.stepId === 'second' && e.resumed));
      // What the status bar starts from after the restart: `first` ended before it.
      const resumedStart = h2.events.find((e) => e.type === 'workflow-start');
      assert.ok(resumedStart && resumedStart.type === 'workflow-start');
      assert.deepEqual([resumedStart.resumed, resumedStart.ended, resumedStart.spentUsd], [true, ['first'], 0]);
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

/** $1 per million tokens, in and out: `costly` (400k tokens) spends $0.40. */
const PRICES = { faux: { input: 1, output: 1 } };

test('budget reached mid-workflow, headless: no new step starts, the request is rejected as headless, status budget', async () => {
  await withTempDir(async (dir) => {
    const wf = `budgetUsd: 0.25\nsteps:
  - { id: spend, agent: planner, prompt: "costly" }
  - { id: also, agent: reviewer, prompt: "check cheap" }
  - { id: next, agent: coder, after: [spend, also], prompt: "implement" }
`;
    const h = await startWorkflowHarness({ dir, agents: AGENTS, script: SCRIPT, workflows: { capped: wf }, models: PRICES, headless: { approve: 'all' } });
    try {
      assert.ok((await h.commands.start('capped', '')).ok);
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
    const h = await startWorkflowHarness({ dir, agents: AGENTS, script: SCRIPT, workflows: { capped: wf }, models: PRICES, config: { budgets: { raiseBy: 2 } } });
    try {
      assert.ok((await h.commands.start('capped', '')).ok);
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

test('a rejected step (the user rejects its turn\'s budget request) stops its dependants only; the other branch finishes', async () => {
  await withTempDir(async (dir) => {
    const wf = `steps:
  - { id: greedy, agent: coder, prompt: "greedy work" }
  - { id: fine, agent: planner, prompt: "plan it" }
  - { id: after-greedy, agent: reviewer, after: [greedy], prompt: "check {{steps.greedy.output}}" }
  - { id: after-fine, agent: reviewer, after: [fine], prompt: "check {{steps.fine.output}}" }
`;
    // The coder's first call spends $0.40 and asks for a tool; its second call meets budgets.sessionUsd.
    const script = `${SCRIPT}
  - { agent: coder, when: "^greedy", toolCalls: [{ name: todo_read }], usage: { inputTokens: 300000, outputTokens: 100000 }, repeat: true }
  - { agent: coder, on: tool-result, text: "never reached", repeat: true }
`;
    const agents = [{ id: 'planner' }, { id: 'coder', tools: ['todo_read'] }, { id: 'reviewer' }];
    const h = await startWorkflowHarness({ dir, agents, script, workflows: { split: wf }, models: PRICES, config: { budgets: { sessionUsd: 0.1 } } });
    try {
      assert.ok((await h.commands.start('split', '')).ok);
      const request = await h.waitFor((e) => e.type === 'approval-request' && e.toolName === 'budget', 15000);
      assert.ok(request.type === 'approval-request');
      assert.equal(request.sessionId, 'session-user__coder__split-greedy');
      assert.deepEqual(h.core.resolveApprovals([request.requestId], 'rejected'), { ok: true });
      const end = await waitEnd(h as never);
      assert.equal(end.status, 'failed');
      assert.deepEqual(end.failed, ['greedy']);
      assert.deepEqual(end.skipped, ['after-greedy']);
      const ends = h.events.filter((e) => e.type === 'workflow-step-end');
      const of = (id: string) => ends.find((e) => e.type === 'workflow-step-end' && e.stepId === id) as { status: string; error?: string };
      assert.match(of('greedy').error!, /^budget reached: budgets\.sessionUsd.*: rejected$/);
      assert.equal(of('after-greedy').error, 'not run: greedy failed');
      assert.deepEqual([of('fine').status, of('after-fine').status], ['done', 'done']);
      assert.equal(textOf(h.core.history('session-user__reviewer__split-after-fine').at(-1)!), 'REVIEW(check PLAN(plan it))');
      assert.equal(h.core.history('session-user__reviewer__split-after-greedy').length, 0);
    } finally {
      await h.stop();
    }
  });
});

test('restart while a step waits on an approval: the core resumes that turn, the workflow waits for it (no extra message), then goes on', async () => {
  await withTempDir(async (dir) => {
    const wf = `steps:
  - { id: write, agent: coder, prompt: "write the file" }
  - { id: check, agent: reviewer, after: [write], prompt: "check {{steps.write.output}}" }
`;
    const script = `${SCRIPT}
  - { agent: coder, when: "^write the file", toolCalls: [{ name: file_write, input: { path: out.txt, content: hello } }], repeat: true }
  - { agent: coder, on: tool-result, text: "wrote out.txt", repeat: true }
`;
    const agents = [{ id: 'planner' }, { id: 'coder', tools: ['file_write'] }, { id: 'reviewer' }];
    const options = { dir, agents, script, rules: { file_write: 'ask' as const } };
    const h1 = await startWorkflowHarness({ ...options, workflows: { gated: wf } });
    assert.ok((await h1.commands.start('gated', '')).ok);
    await h1.waitFor((e) => e.type === 'approval-request' && e.toolName === 'file_write', 15000);
    await h1.stop();
    const saved = JSON.parse(await readFile(join(h1.layout.runDir(h1.runId), 'workflows', 'gated-1.json'), 'utf8'));
    assert.deepEqual([saved.status, saved.steps.write.status, saved.steps.check.status], ['running', 'running', 'pending']);

    const h2 = await startWorkflowHarness(options);
    try {
      assert.equal(h2.runId, h1.runId);
      await h2.resumeWorkflows();
      await h2.waitFor((e) => e.type === 'workflow-step-start' && e.stepId === 'write' && e.resumed);
      const [pending] = h2.core.pendingApprovals();
      assert.ok(pending, 'the request survived the restart');
      assert.equal(pending.toolName, 'file_write');
      assert.deepEqual(h2.core.resolveApprovals([pending.requestId], 'approved'), { ok: true });
      const end = await waitEnd(h2 as never);
      assert.equal(end.status, 'done');
      assert.deepEqual(h2.trace(), ['start:write', 'end:write:done', 'start:check', 'end:check:done', 'workflow-end:done']);
      assert.equal(await readFile(join(dir, 'out.txt'), 'utf8'), 'hello');
      const coder = h2.core.history('session-user__coder__gated-write');
      assert.equal(coder.filter((m) => m.role === 'user' && textOf(m) !== '').length, 1, 'only the step\'s prompt: the resumed turn needed no nudge');
      assert.equal(textOf(h2.core.history('session-user__reviewer__gated-check')[0]!), 'check wrote out.txt');
    } finally {
      await h2.stop();
    }
  });
});

test('cancel while the workflow\'s budget request waits: the request is withdrawn, no step starts, the workflow ends cancelled', async () => {
  await withTempDir(async (dir) => {
    const wf = `budgetUsd: 0.25\nsteps:
  - { id: spend, agent: planner, prompt: "costly" }
  - { id: next, agent: coder, after: [spend], prompt: "implement" }
`;
    const h = await startWorkflowHarness({ dir, agents: AGENTS, script: SCRIPT, workflows: { capped: wf }, models: PRICES });
    try {
      const started = await h.commands.start('capped', '');
      assert.ok(started.ok);
      const request = await h.waitFor((e) => e.type === 'approval-request' && e.toolName === 'budget');
      assert.ok(request.type === 'approval-request');
      assert.equal(h.commands.cancel(started.workflowId), true);
      const end = await waitEnd(h as never);
      assert.deepEqual([end.status, end.failed, end.skipped], ['cancelled', [], ['next']]);
      assert.ok(h.events.some((e) => e.type === 'approval-resolve' && e.requestId === request.requestId && e.decidedBy === 'cancel' && e.decision === 'rejected'));
      assert.deepEqual(h.core.pendingApprovals(), []);
      assert.equal(h.core.history('session-user__coder__capped-next').length, 0);
    } finally {
      await h.stop();
    }
  });
});
