import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderModals, tick, type ModalHarness } from './harness';
import { withTempDir } from '../../helpers/tmp';
import { sessionIdOf } from '../../helpers/fake-core';
import { openCheckpointStore } from '../../../src/checkpoints/store';
import { createUndoService } from '../../../src/checkpoints/undo-service';
import type { UndoNote } from '../../../src/checkpoints/undo';

/** Wait (event-driven polling of the frame; the deadline is only a safety net) until `pattern` shows. */
async function until(h: ModalHarness, pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const frame = h.frame();
    if (pattern.test(frame)) return frame;
    if (Date.now() > deadline) throw new Error(`never showed ${pattern}:\n${frame}`);
    await tick(10);
  }
}

test('Ctrl+R on a lane lists its checkpoints with the files changed; Enter shows the diff; y restores and the agent is told', { timeout: 120_000 }, () =>
  withTempDir(async (root) => {
    await writeFile(join(root, 'plan.md'), 'original plan\n');
    await writeFile(join(root, 'hand.txt'), 'mine\n');
    const store = await openCheckpointStore({ workspaceRoot: root, maxFileBytes: 1e6 });
    const sessionId = sessionIdOf('user', 'ur-agent', 'default');
    const open = await store.begin({ runId: 'run-1', sessionId, participantId: 'ur-agent', toolUseIds: ['tu-1'], toolNames: ['file_write'], turn: 2 });
    await writeFile(join(root, 'plan.md'), 'rewritten by the agent\n');
    await writeFile(join(root, 'hand.txt'), 'agent\n');
    await open.finish();
    await writeFile(join(root, 'hand.txt'), 'agent, then fixed by hand\n');
    const notes: UndoNote[] = [];
    const undo = createUndoService({ store, runId: 'run-1', isBusy: () => false, deliver: (note) => { notes.push(note); return true; } });
    const h = await renderModals({ columns: 120, rows: 30, undo });
    try {
      await h.press('ctrl+r');
      let frame = await until(h, /ur-agent · turn 2 · file_write/);
      assert.match(frame, /Checkpoints · user__ur-agent__default/);
      assert.match(frame, /M hand\.txt, M plan\.md/);
      await h.press('enter');
      frame = await until(h, /undo to before ck-/);
      assert.match(frame, /revert +plan\.md +\(ur-agent turn 2\)/);
      assert.match(frame, /changed by hand since \(kept; confirm to restore them too\)/);
      assert.match(frame, /-rewritten by the agent/);
      assert.match(frame, /\+original plan/);
      assert.doesNotMatch(frame, /fixed by hand/, 'the conflict diff is shown only when included');
      assert.match(frame, /y restore · c also restore the 1 file\(s\) changed by hand/);
      await h.press('y');
      frame = await until(h, /restored 1 file\(s\), kept 1 changed by hand; told ur-agent/);
      assert.match(frame, /user · undo to before ck-/, 'the restore is listed as the newest checkpoint');
      assert.equal(await readFile(join(root, 'plan.md'), 'utf8'), 'original plan\n');
      assert.equal(await readFile(join(root, 'hand.txt'), 'utf8'), 'agent, then fixed by hand\n');
      assert.equal(notes.length, 1);
      assert.match(notes[0]!.text, /the user restored files plan\.md to before your turn 2/);
      // Esc closes the modal; the key is in the help.
      await h.press('escape');
      assert.doesNotMatch(h.frame(), /Checkpoints ·/);
      await h.press('f1');
      assert.match(h.frame(), /Ctrl\+R +checkpoints of the focused lane/);
    } finally {
      h.unmount();
      store.close();
    }
  }));

test('Ctrl+R without checkpoints says they are off', async () => {
  const h = await renderModals({ columns: 100, rows: 20 });
  try {
    await h.press('ctrl+r');
    assert.match(h.frame(), /Checkpoints are off/);
  } finally {
    h.unmount();
  }
});
