import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { APP_DIR, startAppHarness } from '../../helpers/app-harness';
import { runCli } from '../../helpers/cli';
import { assertAllValid, eventsOf } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';
import { fauxTokens, recordingFaux, sessionLines } from './helpers';

const READER = { id: 'reader', tools: ['file_read', 'recall'] };
const WINDOW = 4000;
const TURNS = 40;
const CONFIG = { context: { defaultWindow: WINDOW, compactAt: 0.6, keepRecent: 0.3, evictToolResultsOver: 1000 } };
const SCRIPT = `
replies:
  - { agent: reader, purpose: compaction, repeat: true, text: "SUMMARY: the user asked to read big.txt several times; it holds BEGIN-MARKER." }
  - { agent: reader, on: message, when: "use recall", toolCalls: [{ name: recall, input: { query: "turn 0:" } }] }
  - { agent: reader, on: tool-result, when: 'message 0 · user \\(compacted\\)', text: "Recalled turn 0." }
  - { agent: reader, on: message, repeat: true, toolCalls: [{ name: file_read, input: { path: big.txt } }] }
  - { agent: reader, on: tool-result, repeat: true, text: "I read it." }
`;

test('compaction with a tiny window: eviction first, then a summary; the recent part verbatim; nothing deleted; every request fits', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'big.txt'), `BEGIN-MARKER\n${'lorem ipsum dolor sit amet '.repeat(90)}\n`);
    const provider = recordingFaux(SCRIPT);
    const h = await startAppHarness({ dir, agents: [READER], provider, config: CONFIG });
    let sessionId = '';
    for (let i = 0; i < TURNS; i++) {
      const sent = h.core.send('reader', `turn ${i}: read big.txt`);
      assert.ok(sent.ok);
      sessionId = sent.sessionId;
      assert.equal(await h.core.idle(sessionId), 'I read it.');
    }
    const runId = h.events[0]!.runId;
    const lines = sessionLines(h.layout, runId, sessionId);
    const records = lines.filter((l) => l.type !== undefined);
    const kinds = records.map((r) => r.type);
    assert.equal(kinds[0], 'eviction', `eviction comes first: ${kinds.join(',')}`);
    assert.ok(kinds.includes('compaction'), `a summary followed: ${kinds.join(',')}`);
    // Nothing deleted: every message of 12 turns is on disk and in memory.
    const history = h.core.history(sessionId);
    assert.equal(history.length, TURNS * 4);
    assert.equal(lines.length - records.length, TURNS * 4);
    // Summary requests offer no tools and carry the summarizer prompt.
    const summaries = provider.requests.filter((r) => r.meta?.purpose === 'compaction');
    assert.ok(summaries.length >= 1);
    for (const r of summaries) {
      assert.deepEqual(r.tools, []);
      assert.match(r.system, /## Promises/);
    }
    // The request after the last compaction: summary first, then the history from firstKept verbatim.
    const last = records.filter((r) => r.type === 'compaction').at(-1)!;
    const turnRequests = provider.requests.filter((r) => r.meta?.purpose !== 'compaction');
    const after = turnRequests.at(-1)!;
    assert.match(JSON.stringify(after.messages[0]), /Context summary: messages 0–\d+ .*recall tool.*SUMMARY: the user asked/);
    const firstKept = last.firstKept as number;
    assert.ok(firstKept > 0 && history[firstKept]!.content.every((b) => b.type !== 'tool_result'), 'cut at a valid point');
    // Every request stayed within the window (as the provider counts tokens).
    const worst = Math.max(...turnRequests.map(fauxTokens));
    assert.ok(worst <= WINDOW, `largest request ${worst} tokens > window ${WINDOW}`);
    // Events: compaction events match the records; context-size before every call.
    assert.equal(eventsOf(h.events, 'compaction').length, records.length);
    assert.equal(eventsOf(h.events, 'context-size').length, turnRequests.length);
    // recall (held by every agent) finds text from before the compaction.
    const asked = h.core.send('reader', 'use recall to find the first turn');
    assert.ok(asked.ok);
    assert.equal(await h.core.idle(sessionId), 'Recalled turn 0.');
    const recalled = h.core.history(sessionId).at(-2)!.content[0]!;
    assert.ok(recalled.type === 'tool_result' && /message 0 · user \(compacted\): turn 0: read big\.txt/.test(recalled.content));
    assertAllValid(h.core);
    await h.close();

    // Resume: the next start reads the records back and sends the summary plus the messages from firstKept.
    const provider2 = recordingFaux(SCRIPT);
    const h2 = await startAppHarness({ dir, agents: [READER], provider: provider2, config: CONFIG });
    const sent = h2.core.send('reader', 'one more');
    assert.ok(sent.ok && sent.sessionId === sessionId);
    await h2.core.idle(sessionId);
    const first = provider2.requests.find((r) => r.meta?.purpose !== 'compaction')!;
    assert.match(JSON.stringify(first.messages[0]), /Context summary/);
    const lastKept = sessionLines(h2.layout, runId, sessionId).filter((l) => l.type === 'compaction').at(-1)!.firstKept as number;
    assert.ok(first.messages.length <= TURNS * 4 + 5 - lastKept + 1, `${first.messages.length} messages sent after resume`);
    assert.match(JSON.stringify(first.messages.at(-1)), /one more/);
    assert.ok(fauxTokens(first) <= WINDOW);
    assertAllValid(h2.core);
    await h2.close();

    // legion show prints every message, with the compaction points marked.
    const shown = await runCli(['show', runId, '--session', sessionId], { cwd: dir, env: { HOME: dir }, appDir: APP_DIR });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /── compaction .*: messages 0–\d+ summarized for the model/);
    assert.match(shown.stdout, /turn 0: read big\.txt/);
    assert.match(shown.stdout, /one more/);
  });
});

test('compact now (the TUI key): a summary whatever the estimate; refused while a turn runs; nothing to do on a short session', async () => {
  await withTempDir(async (dir) => {
    const provider = recordingFaux(`
replies:
  - { agent: reader, purpose: compaction, repeat: true, text: "SUMMARY: now." }
  - { agent: reader, on: message, when: "slow", delayMs: 300, text: "slow done" }
  - { agent: reader, on: message, repeat: true, text: "ok" }
`);
    const h = await startAppHarness({ dir, agents: [READER], provider });
    const first = h.core.send('reader', 'hello');
    assert.ok(first.ok);
    await h.core.idle(first.sessionId);
    const tooShort = await h.core.compact!(first.sessionId);
    assert.ok(!tooShort.ok && /nothing to compact yet/.test(tooShort.error));
    for (let i = 0; i < 20; i++) {
      h.core.send('reader', `message ${i} ${'text '.repeat(30)}`);
      await h.core.idle(first.sessionId);
    }
    const slow = h.core.send('reader', 'slow one');
    assert.ok(slow.ok);
    const busy = await h.core.compact!(first.sessionId);
    assert.ok(!busy.ok && /a turn is running/.test(busy.error));
    await h.core.idle(first.sessionId);
    const done = await h.core.compact!(first.sessionId);
    assert.ok(done.ok, !done.ok ? done.error : '');
    const summaries = eventsOf(h.events, 'compaction').filter((e) => e.kind === 'summary');
    assert.equal(summaries.length, 1);
    assert.equal(summaries[0]!.summary, 'SUMMARY: now.');
    assert.ok(eventsOf(h.events, 'notice').some((n) => /compact: a turn is running/.test(n.message)));
    assertAllValid(h.core);
    await h.close();
  });
});
