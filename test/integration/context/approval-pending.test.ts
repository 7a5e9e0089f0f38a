import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startAppHarness } from '../../helpers/app-harness';
import { assertAllValid, eventsOf } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';
import { recordingFaux, sessionLines } from './helpers';

/**
 * docs/context.md: compaction never touches what waits elsewhere. A `file_write` of the writer
 * waits for the user's approval while the reader, in its own session, runs enough turns on a
 * tiny window to be compacted (eviction and summary); the pending request is still pending,
 * resolves afterwards, the write happens, and every history is valid.
 */
const WINDOW = 4000;
const CONFIG = { context: { defaultWindow: WINDOW, compactAt: 0.6, keepRecent: 0.3, evictToolResultsOver: 1000 } };
const SCRIPT = `
replies:
  - { agent: reader, purpose: compaction, repeat: true, text: "SUMMARY: big.txt was read many times." }
  - { agent: reader, on: message, repeat: true, toolCalls: [{ name: file_read, input: { path: big.txt } }] }
  - { agent: reader, on: tool-result, repeat: true, text: "I read it." }
  - { agent: writer, on: message, toolCalls: [{ name: file_write, input: { path: out.txt, content: "written after the compaction\\n" } }] }
  - { agent: writer, on: tool-result, text: "Written." }
  - { agent: writer, on: tool-error, text: "Not written." }
`;

test('a compaction in another session while a call waits for approval: the request survives, resolves after, histories valid', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'big.txt'), `${'lorem ipsum dolor sit amet '.repeat(90)}\n`);
    const provider = recordingFaux(SCRIPT);
    const h = await startAppHarness({
      dir, provider, config: CONFIG, rules: { file_write: 'ask' },
      agents: [{ id: 'reader', tools: ['file_read', 'recall'] }, { id: 'writer', tools: ['file_write'] }],
    });
    try {
      const write = h.core.send('writer', 'write out.txt');
      assert.ok(write.ok);
      const asked = await h.waitFor((e) => e.type === 'approval-request' && e.toolName === 'file_write');
      const requestId = (asked as { requestId: string }).requestId;

      let readerSession = '';
      for (let i = 0; i < 30 && !h.events.some((e) => e.type === 'compaction' && e.kind === 'summary'); i++) {
        const sent = h.core.send('reader', `turn ${i}: read big.txt`);
        assert.ok(sent.ok);
        readerSession = sent.sessionId;
        assert.equal(await h.core.idle(readerSession), 'I read it.');
      }
      const compactions = eventsOf(h.events, 'compaction');
      assert.ok(compactions.some((c) => c.kind === 'summary' && c.sessionId === readerSession), 'the reader was summarized');
      assert.ok(compactions.every((c) => c.sessionId === readerSession), 'only the reader compacted');

      // Still pending, in memory and on disk, untouched by the compaction.
      assert.deepEqual(h.core.pendingApprovals().map((r) => r.requestId), [requestId]);
      assert.ok(!h.events.some((e) => e.type === 'approval-resolve' && e.requestId === requestId));
      const onDisk = (await readFile(h.layout.approvals(h.runId), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { requestId: string; type?: string });
      assert.ok(onDisk.some((r) => r.requestId === requestId));

      assert.deepEqual(h.core.resolveApprovals([requestId], 'approved'), { ok: true });
      assert.equal(await h.core.idle(write.sessionId), 'Written.');
      assert.equal(await readFile(join(dir, 'out.txt'), 'utf8'), 'written after the compaction\n');
      assert.ok(h.events.some((e) => e.type === 'approval-resolve' && e.requestId === requestId && e.decision === 'approved' && e.decidedBy === 'user'));
      assertAllValid(h.core);
      // The reader's file kept every message beside its context lines; the writer's has none.
      const runId = h.events[0]!.runId;
      assert.ok(sessionLines(h.layout, runId, readerSession).some((l) => l.type === 'compaction'));
      assert.ok(!sessionLines(h.layout, runId, write.sessionId).some((l) => l.type !== undefined));
    } finally {
      await h.close();
    }
  });
});
