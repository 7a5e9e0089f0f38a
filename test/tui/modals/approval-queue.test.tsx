import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderModals, request, type ModalHarness } from './harness';
import { open } from '../../helpers/fake-core';

async function withQueue(fn: (h: ModalHarness) => Promise<void>, options: Parameters<typeof renderModals>[0] = {}): Promise<void> {
  const h = await renderModals(options);
  try {
    await fn(h);
  } finally {
    h.unmount();
  }
}

/** Three requests from two agents: r1, r2 (scribe), r3 (scout). */
async function three(h: ModalHarness): Promise<void> {
  await h.emit(open('ur-agent', 'scribe', 'notes'), open('ur-agent', 'scout'));
  await h.emit(
    request({ requestId: 'r1', input: { path: 'notes/a.md', content: 'a' } }),
    request({ requestId: 'r2', toolName: 'shell', input: { command: 'npm test' }, ruleId: 'shell-ask', reason: 'Shell asks' }),
    request({ requestId: 'r3', participantId: 'scout', sessionId: 'session-ur-agent__scout__default', input: { path: 'b.txt', content: 'b' }, ruleId: null, reason: undefined }),
  );
}

test('a request opens the queue by itself on an empty composer: grouped by agent with chain, tool, key argument, rule', async () => {
  await withQueue(async (h) => {
    await three(h);
    const f = h.frame();
    assert.match(f, /Approval queue · 3 waiting for you/);
    assert.match(f, /user → ur-agent → scribe {2}\(2\)/);
    assert.match(f, /▶ \[ \] file_write notes\/a\.md {2}· rule writes-ask: Writes need approval/);
    assert.match(f, /\[ \] shell npm test {2}· rule shell-ask: Shell asks/);
    assert.match(f, /user → ur-agent → scout {2}\(1\)/);
    assert.match(f, /\[ \] file_write b\.txt {2}· no rule matched \(default: ask\)/);
    // The lanes keep reducing behind the modal: the status bar counts the requests.
    assert.match(f, /3 approvals pending/);
  });
});

test('y approves the highlighted request only, by its id; the next one is highlighted', async () => {
  await withQueue(async (h) => {
    await three(h);
    await h.press('down', 'y');
    assert.deepEqual(h.resolves, [{ ids: ['r2'], decision: 'approved', options: {} }]);
    const f = h.frame();
    assert.doesNotMatch(f, /\[ \] shell npm test/);
    assert.match(f, /approved shell npm test/);
    assert.match(f, /▶ \[ \] file_write b\.txt/);
    assert.match(f, /2 waiting for you/);
  });
});

test('Space marks; y applies to the marked (not the highlighted); marks survive moving', async () => {
  await withQueue(async (h) => {
    await three(h);
    await h.press('space', 'down', 'down', 'space', 'up');
    assert.match(h.frame(), /2 marked/);
    assert.match(h.frame(), /\[x\] file_write notes\/a\.md/);
    assert.match(h.frame(), /\[x\] file_write b\.txt/);
    await h.type('y');
    assert.deepEqual(h.resolves, [{ ids: ['r1', 'r3'], decision: 'approved', options: {} }]);
    assert.match(h.frame(), /▶ \[ \] shell npm test/);
    // Space again unmarks.
  });
});

test('Space twice unmarks; n asks for a reason inline, Enter rejects with it', async () => {
  await withQueue(async (h) => {
    await three(h);
    await h.press('space', 'space', 'down', 'n');
    assert.match(h.frame(), /Reject 1 request\. Reason \(optional\):/);
    await h.type('use the test script');
    await h.press('enter');
    assert.deepEqual(h.resolves, [{ ids: ['r2'], decision: 'rejected', options: { reason: 'use the test script' } }]);
    assert.match(h.frame(), /rejected shell npm test \(use the test script\)/);
  });
});

test('reject without a reason; Esc in the reason field goes back without deciding', async () => {
  await withQueue(async (h) => {
    await three(h);
    await h.press('n');
    await h.type('never mind');
    await h.press('escape');
    assert.deepEqual(h.resolves, []);
    assert.match(h.frame(), /Approval queue · 3 waiting/);
    assert.doesNotMatch(h.frame(), /Reason/);
    await h.press('n', 'enter');
    assert.deepEqual(h.resolves, [{ ids: ['r1'], decision: 'rejected', options: {} }]);
  });
});

test('Y approves every request shown in one call; the queue closes and says so', async () => {
  await withQueue(async (h) => {
    await three(h);
    await h.type('Y');
    assert.deepEqual(h.resolves, [{ ids: ['r1', 'r2', 'r3'], decision: 'approved', options: {} }]);
    assert.equal(h.store.getState().modal, null);
    assert.match(h.frame(), /approved 3 requests/);
  });
});

test('N rejects all with a reason', async () => {
  await withQueue(async (h) => {
    await three(h);
    await h.type('N');
    assert.match(h.frame(), /Reject 3 requests/);
    await h.type('not now');
    await h.press('enter');
    assert.deepEqual(h.resolves, [{ ids: ['r1', 'r2', 'r3'], decision: 'rejected', options: { reason: 'not now' } }]);
    assert.equal(h.store.getState().modal, null);
  });
});

test('a approves and allows the same for the session', async () => {
  await withQueue(async (h) => {
    await three(h);
    await h.press('down', 'a');
    assert.deepEqual(h.resolves, [{ ids: ['r2'], decision: 'approved', options: { allowForSession: true } }]);
    assert.match(h.frame(), /approved shell npm test and allowed for the session/);
  });
});

test('requests resolved elsewhere disappear live; a vanished marked request is reported, never sent', async () => {
  await withQueue(async (h) => {
    await three(h);
    await h.press('space');
    // r1 is marked; an agent approver (or a cancel) resolves it before the next frame's key.
    h.core.emit({ type: 'approval-resolve', requestId: 'r1', decision: 'rejected', decidedBy: 'cancel', reason: 'cancelled' });
    // Same tick: the key sees the frame that still shows r1.
    await h.type('y');
    // r1 vanished: not sent. Nothing else was marked, so nothing else was decided.
    assert.deepEqual(h.resolves, []);
    assert.match(h.frame(), /1 request was already resolved elsewhere and left alone \(file_write notes\/a\.md\)/);
    assert.doesNotMatch(h.frame(), /notes\/a\.md {2}·/);
    await h.emit({ type: 'approval-resolve', requestId: 'r3', decision: 'approved', decidedBy: 'agent:ur-agent', reason: 'ok' });
    assert.match(h.frame(), /1 waiting for you/);
    assert.doesNotMatch(h.frame(), /b\.txt/);
  });
});

test('Y applies only to what was shown: a request arriving after the frame is not included', async () => {
  await withQueue(async (h) => {
    await three(h);
    // Emitted without waiting for a frame: the key handler still holds the three shown.
    h.core.emit(request({ requestId: 'r4', input: { path: 'late.md', content: 'x' } }));
    await h.type('Y');
    assert.deepEqual(h.resolves, [{ ids: ['r1', 'r2', 'r3'], decision: 'approved', options: {} }]);
    assert.match(h.frame(), /late\.md/);
    assert.notEqual(h.store.getState().modal, null);
  });
});

test('Enter shows details with the preview; y there decides that request; Esc goes back, Esc again closes', async () => {
  const previews: string[] = [];
  await withQueue(async (h) => {
    await three(h);
    await h.press('enter');
    await new Promise((r) => setTimeout(r, 10));
    await h.press('down', 'up');
    let f = h.frame();
    assert.match(f, /Request 1 of 3 · file_write notes\/a\.md/);
    assert.match(f, /asks +scribe \(user → ur-agent → scribe\)/);
    assert.match(f, /session +ur-agent → scribe · notes/);
    assert.match(f, /rule +writes-ask: Writes need approval/);
    assert.match(f, /\+\+\+ b\/notes\/a\.md/);
    assert.match(f, /\+a/);
    assert.deepEqual(previews, ['file_write']);
    await h.press('escape');
    assert.match(h.frame(), /Approval queue · 3 waiting/);
    await h.press('down', 'enter');
    await new Promise((r) => setTimeout(r, 10));
    await h.press('down');
    f = h.frame();
    assert.match(f, /\$ npm test/);
    await h.type('y');
    assert.deepEqual(h.resolves, [{ ids: ['r2'], decision: 'approved', options: {} }]);
    assert.match(h.frame(), /Approval queue · 2 waiting/);
    await h.press('escape');
    assert.equal(h.store.getState().modal, null);
  }, {
    services: {
      async preview(toolName, input) {
        previews.push(toolName);
        if (toolName === 'shell') return { kind: 'command', text: `$ ${(input as { command: string }).command}` };
        return { kind: 'diff', text: '--- /dev/null\n+++ b/notes/a.md\n@@ -0,0 +1,1 @@\n+a' };
      },
    },
  });
});

test('the queue does not open over a draft: the bell rings and the badge counts; Ctrl+Y opens it', async () => {
  await withQueue(async (h) => {
    await h.type('half a thought');
    await h.emit(request({ requestId: 'r1' }));
    assert.equal(h.store.getState().modal, null);
    assert.match(h.frame(), /half a thought/);
    assert.match(h.frame(), /1 approval pending/);
    assert.equal(h.bells.count, 1);
    await h.press('ctrl+y');
    assert.match(h.frame(), /Approval queue · 1 waiting/);
    // Ctrl+Y again closes it; the draft is intact.
    await h.press('ctrl+y');
    assert.equal(h.store.getState().modal, null);
    assert.match(h.frame(), /half a thought/);
  });
});

test('requests for an agent approver neither open the queue nor ring; they are listed as elsewhere', async () => {
  await withQueue(async (h) => {
    await h.emit(request({ requestId: 'r1', approverId: 'ur-agent' }));
    assert.equal(h.store.getState().modal, null);
    assert.equal(h.bells.count, 0);
    await h.press('ctrl+y');
    assert.match(h.frame(), /nothing waiting for you/);
    assert.match(h.frame(), /1 more waiting on agent approvers \(ur-agent\)/);
    // The cascade climbs: the same request re-emitted for the user appears live.
    await h.emit(request({ requestId: 'r1', approverId: 'user' }));
    assert.match(h.frame(), /1 waiting for you/);
  });
});

test('details at 80×24 with the real preview: a unified diff against the file on disk', async () => {
  const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { approvalServicesFor } = await import('../../../components/modals/approval-services');
  const root = await mkdtemp(join(tmpdir(), 'legion-preview-'));
  try {
    await writeFile(join(root, 'plan.md'), '# Plan\n\n- buy seeds\n- dig\n');
    await withQueue(async (h) => {
      await h.emit(open('ur-agent', 'scribe', 'notes'), request({ requestId: 'r1', input: { path: 'plan.md', content: '# Plan\n\n- buy seeds\n- water\n- dig\n' } }));
      await h.press('enter');
      const end = Date.now() + 15_000; // a safety bound only: the preview reads the disk, slow on a loaded machine
      while (!/\+- water/.test(h.frame()) && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      const f = h.frame();
      assert.ok(f.split('\n').length <= 24);
      assert.match(f, /--- a\/plan\.md/);
      assert.match(f, /\+\+\+ b\/plan\.md/);
      assert.match(f, /@@ -1,4 \+1,5 @@/);
      assert.match(f, / - buy seeds/);
      assert.match(f, /\+- water/);
      assert.match(f, /y approve · n reject · a allow for session/);
      // n in the details asks for the reason of this one request.
      await h.type('n');
      assert.match(h.frame(), /Reject 1 request\./);
      await h.type('no watering');
      await h.press('enter');
      assert.deepEqual(h.resolves, [{ ids: ['r1'], decision: 'rejected', options: { reason: 'no watering' } }]);
    }, { columns: 80, rows: 24, services: approvalServicesFor(root) });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('the core refusing a decision is shown and nothing is hidden', async () => {
  await withQueue(async (h) => {
    await three(h);
    h.core.resolveApprovals = () => ({ ok: false, error: 'request r1 waits on someone else' });
    await h.type('y');
    assert.match(h.frame(), /not applied: request r1 waits on someone else/);
    assert.match(h.frame(), /3 waiting for you/);
  });
});

test('Esc and an arrow typed together (one chunk: ESC ESC [ B) are both keys: back to the list, then down', async () => {
  await withQueue(async (h) => {
    await three(h);
    await h.press('enter');
    assert.match(h.frame(), /Request 1 of 3/);
    await h.type('\x1b\x1b[B');
    const f = h.frame();
    assert.match(f, /Approval queue · 3 waiting/);
    assert.match(f, /▶ \[ \] shell npm test/);
  });
});

test('a budget request (docs/context.md#budgets) shows which budget, what was spent and what approving does; y raises it by its id', async () => {
  await withQueue(async (h) => {
    await h.emit(open('ur-agent', 'scribe', 'notes'));
    await h.emit(request({
      requestId: 'b1', toolName: 'budget', ruleId: null,
      input: { budget: 'runUsd', spentUsd: 1.0312, limit: 1, raiseBy: 1 },
      reason: 'budget reached: budgets.runUsd ($1.03 of $1.00); approve to raise it by $1.00, reject to end the turn',
    }));
    const f = h.frame();
    assert.match(f, /▶ \[ \] budget runUsd {2}· budget reached: budgets\.runUsd \(\$1\.03 of \$1\.00\); approve to raise it by \$1\.00/);
    await h.type('y');
    assert.deepEqual(h.resolves, [{ ids: ['b1'], decision: 'approved', options: {} }]);
  }, { columns: 160 });
});

test('a queue that just opened by itself stays open when Ctrl+Y comes right after (pressed to open it); later Ctrl+Y closes it', async () => {
  const clock = { now: 50_000 };
  await withQueue(async (h) => {
    await h.emit(request({ requestId: 'r1' }));
    assert.equal(h.store.getState().modal?.kind, 'approvals', 'opened by itself on the empty composer');
    clock.now += 300;
    await h.press('ctrl+y');
    assert.equal(h.store.getState().modal?.kind, 'approvals', 'the Ctrl+Y meant to open it does not close it');
    clock.now += 1_000;
    await h.press('ctrl+y');
    assert.equal(h.store.getState().modal, null, 'a second later Ctrl+Y closes it as usual');
    // Opened by the user, it closes with its key at once.
    await h.press('ctrl+y');
    assert.equal(h.store.getState().modal?.kind, 'approvals');
    await h.press('ctrl+y');
    assert.equal(h.store.getState().modal, null);
  }, { clock });
});

test('a queue that opened by itself closes once its requests were decided elsewhere; the status line says where', async () => {
  await withQueue(async (h) => {
    await h.emit(open('ur-agent', 'scribe', 'notes'));
    await h.emit(request({ requestId: 'apr-3' }), request({ requestId: 'apr-4', input: { path: 'b.md', content: 'b' } }));
    assert.match(h.frame(), /Approval queue · 2 waiting for you/);
    await h.emit({ type: 'approval-resolve', requestId: 'apr-4', decision: 'approved', decidedBy: 'user', reason: 'approved by user' });
    assert.match(h.frame(), /Approval queue · 1 waiting for you/, 'one left: the queue stays');
    await h.emit({ type: 'approval-resolve', requestId: 'apr-3', decision: 'approved', decidedBy: 'remote:telegram:@ann', reason: 'approved by @ann' });
    assert.equal(h.store.getState().modal, null, 'nothing left: the queue closed by itself');
    assert.match(h.frame(), /apr-3 approved in Telegram by @ann/);
    // What the user types next goes to the composer.
    await h.type('hello');
    assert.match(h.frame(), /› hello/);
  });
});

test('decided elsewhere from another terminal: the queue that opened by itself closes and says so', async () => {
  await withQueue(async (h) => {
    await h.emit(open('ur-agent', 'scribe', 'notes'));
    await h.emit(request({ requestId: 'apr-7' }));
    await h.emit({ type: 'approval-resolve', requestId: 'apr-7', decision: 'rejected', decidedBy: 'user', reason: 'rejected by user' });
    assert.equal(h.store.getState().modal, null);
    assert.match(h.frame(), /apr-7 rejected in another terminal/);
  });
});

test('a queue the user opened stays open when emptied elsewhere; text typed into it closes it and goes to the composer', async () => {
  await withQueue(async (h) => {
    await h.press('ctrl+y');
    assert.equal(h.store.getState().modal?.kind, 'approvals');
    await h.emit(open('ur-agent', 'scribe', 'notes'));
    await h.emit(request({ requestId: 'apr-3' }));
    await h.emit({ type: 'approval-resolve', requestId: 'apr-3', decision: 'approved', decidedBy: 'remote:web', reason: 'approved on the web' });
    assert.equal(h.store.getState().modal?.kind, 'approvals', 'the user opened it: it stays');
    assert.match(h.frame(), /Approval queue · nothing waiting for you/);
    // "yes please": y, e, s… would be decisions or be swallowed; in an empty queue they are the user's message.
    await h.type('yes please');
    assert.equal(h.store.getState().modal, null);
    assert.match(h.frame(), /› yes please/);
    await h.press('enter');
    assert.deepEqual(h.core.calls.send.at(-1), { responderId: 'ur-agent', text: 'yes please', name: 'default' });
  });
});

test('one key at a time into an empty queue the user opened: the first letter closes it, none is lost', async () => {
  await withQueue(async (h) => {
    await h.press('ctrl+y');
    for (const ch of 'hi') await h.type(ch);
    assert.equal(h.store.getState().modal, null);
    assert.match(h.frame(), /› hi/);
  });
});
