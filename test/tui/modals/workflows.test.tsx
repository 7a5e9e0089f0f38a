import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderModals, type ModalHarness } from './harness';
import { createFakeCore, open, sessionIdOf, status } from '../../helpers/fake-core';
import { focusedSession } from '../../../components/state/ui-state';
import type { WorkflowCommands, WorkflowInfo } from '../../../src/runtime/core-api';
import { parseWorkflowLine } from '../../../components/modals/new-session-workflows';

/** Workflows in the TUI (docs/workflows.md#tui): the new-session modal starts them, the status bar shows progress. */

const WORKFLOWS: WorkflowInfo[] = [
  { name: 'review-pr', description: 'three reviews and a summary', steps: ['a', 'b', 'c', 'sum'], inputs: ['focus'], usesInput: true, file: '/w/review-pr.yaml', source: 'project' },
  { name: 'broken', description: '', steps: [], inputs: [], usesInput: false, file: '/w/broken.yaml', source: 'project', error: '/w/broken.yaml:2: step a: unknown agent "x"' },
];

async function withApp(fn: (h: ModalHarness, starts: unknown[][], cancels: string[]) => Promise<void>, result: { ok: true; workflowId: string } | { ok: false; error: string } = { ok: true, workflowId: 'review-pr-1' }): Promise<void> {
  const core = createFakeCore();
  const starts: unknown[][] = [];
  const cancels: string[] = [];
  const workflows: WorkflowCommands = {
    cancel: (id) => {
      cancels.push(id);
      return true;
    },
    list: async () => WORKFLOWS,
    start: async (...args) => {
      starts.push(args);
      return result;
    },
  };
  const h = await renderModals({ core, workflows, columns: 120, rows: 26 });
  try { await fn(h, starts, cancels); } finally { h.unmount(); }
}

test('Ctrl+N lists runnable workflows below the agents; choosing one asks for its input and Enter starts it', async () => {
  await withApp(async (h, starts) => {
    await h.press('ctrl+n');
    let f = h.frame();
    assert.match(f, /review-pr +workflow · 4 steps · three reviews and a summary/);
    assert.doesNotMatch(f, /broken/);
    assert.match(f, /ur-agent/);
    await h.type('review');
    f = h.frame();
    assert.match(f, /▶ review-pr/);
    assert.match(f, /Input +input \| focus=…/);
    await h.press('tab');
    assert.match(h.frame(), /Runs review-pr: a, b, c, sum, each step in its own lane/);
    await h.type('the PR | focus=speed');
    await h.press('enter');
    await h.emit();
    assert.deepEqual(starts, [['review-pr', 'the PR', { focus: 'speed' }]]);
    assert.equal(h.store.getState().modal, null);
  });
});

test('a workflow the core refuses keeps the modal open with the one-line error', async () => {
  await withApp(async (h, starts) => {
    await h.press('ctrl+n');
    await h.type('review-pr');
    await h.press('tab');
    await h.press('enter');
    await h.emit();
    assert.equal(starts.length, 1);
    assert.match(h.frame(), /workflow review-pr needs an input/);
    assert.notEqual(h.store.getState().modal, null);
  }, { ok: false, error: 'workflow review-pr needs an input (its prompts use {{input}})' });
});

test('running steps open their lanes; the status bar shows `review-pr 2/4 · $0.31` until the workflow ends', async () => {
  await withApp(async (h) => {
    const a = sessionIdOf('user', 'scout', 'review-pr-a');
    const b = sessionIdOf('user', 'scribe', 'review-pr-b');
    const base = { workflowId: 'review-pr-1', name: 'review-pr' };
    await h.emit({ type: 'workflow-start', ...base, steps: ['a', 'b', 'c', 'sum'], resumed: false });
    await h.emit(open('user', 'scout', 'review-pr-a'), { type: 'workflow-step-start', ...base, stepId: 'a', agent: 'scout', sessionId: a, resumed: false });
    await h.emit(open('user', 'scribe', 'review-pr-b'), { type: 'workflow-step-start', ...base, stepId: 'b', agent: 'scribe', sessionId: b, resumed: false });
    assert.ok(h.store.getState().lanes.includes(a) && h.store.getState().lanes.includes(b));
    assert.match(h.frame(), /review-pr 0\/4 · \$0\.00/);
    await h.emit(
      { type: 'usage', sessionId: a, participantId: 'scout', model: 'm', inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.2 },
      { type: 'usage', sessionId: b, participantId: 'scribe', model: 'm', inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.11 },
      { type: 'usage', sessionId: sessionIdOf('user', 'ur-agent'), participantId: 'ur-agent', model: 'm', inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 5 },
      { type: 'workflow-step-end', ...base, stepId: 'a', sessionId: a, status: 'done', costUsd: 0.2 },
      { type: 'workflow-step-end', ...base, stepId: 'b', sessionId: b, status: 'done', costUsd: 0.11 },
    );
    assert.match(h.frame(), /review-pr 2\/4 · \$0\.31/);
    await h.emit({ type: 'workflow-end', ...base, status: 'failed', spentUsd: 0.31, failed: ['c'], skipped: ['sum'] });
    assert.doesNotMatch(h.frame(), /review-pr \d\/4/);
  });
});

test('a workflow resumed after a restart shows the steps that ended and the money spent before it', async () => {
  await withApp(async (h) => {
    const c = sessionIdOf('user', 'scout', 'review-pr-c');
    await h.emit({ type: 'workflow-start', workflowId: 'review-pr-1', name: 'review-pr', steps: ['a', 'b', 'c', 'sum'], resumed: true, ended: ['a', 'b'], spentUsd: 0.25 });
    assert.match(h.frame(), /review-pr 2\/4 · \$0\.25/);
    await h.emit(open('user', 'scout', 'review-pr-c'), { type: 'workflow-step-start', workflowId: 'review-pr-1', name: 'review-pr', stepId: 'c', agent: 'scout', sessionId: c, resumed: true });
    await h.emit({ type: 'usage', sessionId: c, participantId: 'scout', model: 'm', inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.06 });
    assert.match(h.frame(), /review-pr 2\/4 · \$0\.31/);
  });
});

test('Esc in the lane of a workflow\'s only running step interrupts it, and the workflow ends (as the runner ends it): no "Esc again" is offered', async () => {
  await withApp(async (h, _starts, cancels) => {
    const a = sessionIdOf('user', 'scout', 'review-pr-a');
    const base = { workflowId: 'review-pr-1', name: 'review-pr' };
    await h.emit({ type: 'workflow-start', ...base, steps: ['a', 'b'], resumed: false });
    await h.emit(open('user', 'scout', 'review-pr-a'), { type: 'workflow-step-start', ...base, stepId: 'a', agent: 'scout', sessionId: a, resumed: false }, status(a, 'scout', 'thinking'));
    for (let i = 0; i < 4 && focusedSession(h.store.getState())?.id !== a; i++) h.store.dispatch({ type: 'focus-lane', delta: 1 });
    assert.equal(focusedSession(h.store.getState())?.id, a);
    await h.press('escape');
    assert.deepEqual(h.core.calls.cancel, [a]);
    assert.match(h.frame(), /interrupting scout…/);
    assert.doesNotMatch(h.frame(), /Esc again/);
    // What src/workflows/runner.ts does then: the step ends cancelled, its dependant is skipped, the workflow fails.
    await h.emit(
      status(a, 'scout', 'idle'),
      { type: 'workflow-step-end', ...base, stepId: 'a', sessionId: a, status: 'cancelled', error: 'interrupted', costUsd: 0 },
      { type: 'workflow-step-end', ...base, stepId: 'b', sessionId: '', status: 'skipped', error: 'not run: a was cancelled', costUsd: 0 },
      { type: 'workflow-end', ...base, status: 'failed', spentUsd: 0, failed: ['a'], skipped: ['b'] },
    );
    await h.press('escape');
    assert.deepEqual(cancels, []);
    assert.match(h.frame(), /nothing to interrupt in this lane/);
  });
});

test('Esc in a step\'s lane while another step runs interrupts that step; Esc again (nothing left to interrupt there) cancels the whole workflow', async () => {
  await withApp(async (h, _starts, cancels) => {
    const a = sessionIdOf('user', 'scout', 'review-pr-a');
    const b = sessionIdOf('user', 'scout', 'review-pr-b');
    const base = { workflowId: 'review-pr-1', name: 'review-pr' };
    await h.emit({ type: 'workflow-start', ...base, steps: ['a', 'b', 'sum'], resumed: false });
    await h.emit(open('user', 'scout', 'review-pr-a'), { type: 'workflow-step-start', ...base, stepId: 'a', agent: 'scout', sessionId: a, resumed: false }, status(a, 'scout', 'thinking'));
    await h.emit(open('user', 'scout', 'review-pr-b'), { type: 'workflow-step-start', ...base, stepId: 'b', agent: 'scout', sessionId: b, resumed: false }, status(b, 'scout', 'thinking'));
    for (let i = 0; i < 4 && focusedSession(h.store.getState())?.id !== a; i++) h.store.dispatch({ type: 'focus-lane', delta: 1 });
    assert.equal(focusedSession(h.store.getState())?.id, a);
    await h.press('escape');
    assert.deepEqual(h.core.calls.cancel, [a]);
    assert.deepEqual(cancels, []);
    assert.match(h.frame(), /interrupting scout… \(Esc again cancels workflow review-pr\)/);
    // As the runner: step a ends cancelled; b still runs, so the workflow does too (sum waits on both).
    await h.emit(status(a, 'scout', 'idle'), { type: 'workflow-step-end', ...base, stepId: 'a', sessionId: a, status: 'cancelled', error: 'interrupted', costUsd: 0 });
    await h.press('escape');
    assert.deepEqual(cancels, ['review-pr-1']);
    assert.match(h.frame(), /cancelling workflow review-pr: its running steps stop, the rest are skipped/);
    // Once the workflow ended, its lanes are ordinary lanes again.
    await h.emit(
      status(b, 'scout', 'idle'),
      { type: 'workflow-step-end', ...base, stepId: 'b', sessionId: b, status: 'cancelled', error: 'the workflow was cancelled', costUsd: 0 },
      { type: 'workflow-step-end', ...base, stepId: 'sum', sessionId: '', status: 'skipped', error: 'not run: the workflow was cancelled', costUsd: 0 },
      { type: 'workflow-end', ...base, status: 'cancelled', spentUsd: 0, failed: ['a', 'b'], skipped: ['sum'] },
    );
    await h.press('escape');
    assert.deepEqual(cancels, ['review-pr-1']);
    assert.match(h.frame(), /nothing to interrupt in this lane/);
  });
});

test('a step in a session that exists already (a second run of the workflow) still gets its lane', async () => {
  await withApp(async (h) => {
    const ids = ['one', 'two', 'three', 'four', 'five'].map((n) => sessionIdOf('user', 'scout', n));
    for (const n of ['one', 'two', 'three', 'four', 'five']) await h.emit(open('user', 'scout', n));
    // Four lanes at most: an idle lane gave way, so one of these sessions has none now.
    const fifth = ids.find((id) => !h.store.getState().lanes.includes(id));
    assert.ok(fifth);
    await h.emit({ type: 'workflow-start', workflowId: 'w-1', name: 'w', steps: ['s'], resumed: false });
    await h.emit({ type: 'workflow-step-start', workflowId: 'w-1', name: 'w', stepId: 's', agent: 'scout', sessionId: fifth, resumed: false });
    assert.ok(h.store.getState().lanes.includes(fifth));
  });
});

test('parseWorkflowLine: the input, then name=value parts', () => {
  assert.deepEqual(parseWorkflowLine('fix the bug | focus=speed | depth = 2'), { ok: true, input: 'fix the bug', inputs: { focus: 'speed', depth: '2' } });
  assert.deepEqual(parseWorkflowLine(''), { ok: true, input: '', inputs: {} });
  assert.deepEqual(parseWorkflowLine('x | oops'), { ok: false, error: '"oops": a named input is name=value' });
});
