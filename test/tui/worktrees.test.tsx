import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderModals, request } from './modals/harness';
import { open, userMessage } from '../helpers/fake-core';
import { approvalServicesFor } from '../../components/modals/approval-services';

/** Merge requests in the TUI (docs/worktrees.md#merge-requests): the queue shows them with their diff, `y` approves. */
const SESSION = 'session-ur-agent__alice__a';
const DIFF = [
  'diff --git a/shared.txt b/shared.txt',
  '--- a/shared.txt',
  '+++ b/shared.txt',
  '@@ -1,3 +1,3 @@',
  ' one',
  '-two',
  '+two by alice',
  ' three',
  'diff --git a/alice.txt b/alice.txt',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/alice.txt',
  '@@ -0,0 +1 @@',
  '+alice was here',
].join('\n');

const merge = (requestId: string, conflict?: string[]) => request({
  requestId, participantId: 'alice', sessionId: SESSION, chain: ['user', 'ur-agent', 'alice'], toolName: 'merge', ruleId: null,
  input: {
    session: SESSION, branch: `legion/${SESSION}`, diffstat: '2 files changed, 2 insertions(+), 1 deletion(-)',
    files: [{ path: 'shared.txt', status: 'modified', added: 1, removed: 1 }, { path: 'alice.txt', status: 'added', added: 1, removed: 0 }],
    ...(conflict ? { conflict } : {}),
  },
  reason: conflict
    ? `conflict in ${conflict.join(', ')}: alice's work and the workspace changed the same lines; cannot be approved`
    : "merge alice's work from its worktree into the workspace (uncommitted): 2 files changed, 2 insertions(+), 1 deletion(-) (shared.txt, alice.txt)",
});

test('a merge request in the queue: its row, its whole diff in the details (the real preview), approved with y; the lane says worktree', async () => {
  const root = await mkdtemp(join(tmpdir(), 'legion-tui-merge-'));
  try {
    await mkdir(join(root, '.legion', 'worktrees'), { recursive: true });
    await writeFile(join(root, '.legion', 'worktrees', `${SESSION}.diff`), DIFF);
    const h = await renderModals({ columns: 120, rows: 40, services: approvalServicesFor(root) });
    try {
      await h.emit(open('ur-agent', 'alice', 'a'), userMessage(SESSION, '[isolation] You work in your own git worktree at /ws/.legion/worktrees/x\n\nalice\'s part'));
      await h.emit(merge('m1'));
      let f = h.frame();
      assert.match(f, /Approval queue · 1 waiting for you/);
      assert.match(f, new RegExp(`▶ \\[ \\] merge ${SESSION} {2}· merge alice's work from its worktree`));
      await h.press('enter');
      const end = Date.now() + 15_000; // a safety bound only: the preview reads the disk
      while (!/\+alice was here/.test(h.frame()) && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      f = h.frame();
      assert.match(f, /Request 1 of 1 · merge/);
      assert.match(f, /2 files changed, 2 insertions\(\+\), 1 deletion\(-\)/);
      assert.match(f, /--- a\/shared\.txt/);
      assert.match(f, /\+two by alice/);
      assert.match(f, /\+alice was here/);
      await h.type('y');
      assert.deepEqual(h.resolves, [{ ids: ['m1'], decision: 'approved', options: {} }]);
      await h.press('escape');
      assert.match(h.frame(), /ur-agent → alice · a .*worktree/);
    } finally {
      h.unmount();
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('a conflicting merge request is marked in the queue, and the core refusing to approve it is shown', async () => {
  const h = await renderModals({ columns: 140 });
  try {
    await h.emit(open('ur-agent', 'alice', 'a'), merge('m2', ['shared.txt']));
    assert.match(h.frame(), new RegExp(`merge ${SESSION} \\[conflict\\] {2}· conflict in shared\\.txt`));
    h.core.resolveApprovals = () => ({ ok: false, error: 'merge request m2 conflicts in shared.txt and cannot be approved' });
    await h.type('y');
    assert.match(h.frame(), /not applied: merge request m2 conflicts in shared\.txt and cannot be approved/);
    assert.match(h.frame(), /1 waiting for you/);
  } finally {
    h.unmount();
  }
});
