import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startAppHarness } from '../../helpers/app-harness';
import { assertAllValid, eventsOf } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';
import { recordingFaux, sessionLines } from './helpers';

const CONFIG = { context: { defaultWindow: 4000, compactAt: 0.6, keepRecent: 0.3, evictToolResultsOver: 100_000 } };

test('cancel during a summary request: no compaction is written, the session stays valid and usable', async () => {
  await withTempDir(async (dir) => {
    const provider = recordingFaux(`
replies:
  - { agent: talker, purpose: compaction, repeat: true, delayMs: 5000, text: "SUMMARY never arrives" }
  - { agent: talker, on: message, repeat: true, text: "noted" }
`);
    const h = await startAppHarness({ dir, agents: [{ id: 'talker', tools: [] }], provider, config: CONFIG });
    let sessionId = '';
    // Grow the history until a call needs a summary (no tool results to evict).
    for (let i = 0; i < 30 && !provider.requests.some((r) => r.meta?.purpose === 'compaction'); i++) {
      const sent = h.core.send('talker', `part ${i}: ${'words '.repeat(60)}`);
      assert.ok(sent.ok);
      sessionId = sent.sessionId;
      const summarizing = new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (provider.requests.some((r) => r.meta?.purpose === 'compaction')) { clearInterval(poll); resolve(); }
        }, 5);
        void h.core.idle(sessionId).then(() => { clearInterval(poll); resolve(); });
      });
      await summarizing;
    }
    assert.ok(provider.requests.some((r) => r.meta?.purpose === 'compaction'), 'a summary was requested');
    h.core.cancel(sessionId);
    await h.core.idle(sessionId);
    assert.equal(h.core.lastOutcome(sessionId)?.kind, 'interrupted');
    const runId = h.events[0]!.runId;
    assert.deepEqual(sessionLines(h.layout, runId, sessionId).filter((l) => l.type === 'compaction'), []);
    assertAllValid(h.core);
    await h.close();
  });
});

test('compaction inside a delegation chain: the worker compacts mid-turn, the caller gets its answer, every history valid', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'big.txt'), 'x'.repeat(3000));
    const provider = recordingFaux(`
replies:
  - { agent: reader, purpose: compaction, repeat: true, text: "SUMMARY: read big.txt many times." }
  - { agent: boss, on: message, toolCalls: [{ name: communicator, input: { targetId: reader, message: "read big.txt eight times" } }] }
  - { agent: boss, on: tool-result, text: "reader says: {{lastText}}" }
  - { agent: reader, on: message, toolCalls: [{ name: file_read, input: { path: big.txt } }] }
  - { agent: reader, on: tool-result, repeat: true, toolCalls: [{ name: file_read, input: { path: big.txt } }] }
`);
    // The reader reads eight times in one turn, then answers (maxIterations ends the loop).
    const h = await startAppHarness({
      dir, provider, config: { ...CONFIG, context: { ...CONFIG.context, evictToolResultsOver: 1000 }, runtime: { maxIterations: 9 } },
      agents: [{ id: 'boss', tools: ['communicator'] }, { id: 'reader', tools: ['file_read'] }],
    });
    const sent = h.core.send('boss', 'go');
    assert.ok(sent.ok);
    await h.core.idle(sent.sessionId);
    const compactions = eventsOf(h.events, 'compaction');
    assert.ok(compactions.length > 0, 'the reader compacted during its turn');
    assert.ok(compactions.every((e) => e.participantId === 'reader'));
    assert.match(h.core.history(sent.sessionId).at(-1)!.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), /reader says:/);
    assertAllValid(h.core);
    await h.close();
  });
});
