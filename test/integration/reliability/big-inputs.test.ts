import '../../helpers/own-home';
import { test } from 'node:test';
import { testUserDir } from '../../helpers/trust';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { composeApp } from '../../../src/cli/compose';
import type { LegionEvent } from '../../../src/events/types';
import { textOf } from '../../../src/model/message';
import { planRepair } from '../../../src/model/repair';
import { layoutFor } from '../../../src/storage/layout';
import { initWorkspace } from '../../../src/collective/init';
import { createRunStore } from '../../../src/session/run-store';
import { createSessionStore } from '../../../src/session/session-store';
import { randomIds, systemClock } from '../../../src/session/ids';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR, appContext, readJsonlLines } from '../../helpers/crash-workspace';
import { startStrictApiServer } from '../../helpers/strict-api-server';
import { anthropicStream } from '../../helpers/vendor-streams';

/**
 * Big inputs (issue 9) through the whole core: a 1 MB model reply streamed by the real
 * Anthropic SDK, and a run of 10,000 sessions. The 50 MB file_read and 100 MB shell caps are
 * covered with memory bounds by test/unit/tools (file-read.test.ts, shell.test.ts).
 * Memory figures are RSS deltas with generous bounds (they only catch unbounded growth).
 */
const MB = 1024 * 1024;

function rssMB(): number {
  return process.memoryUsage().rss / MB;
}

test('a 1 MB model reply streamed through the core: no crash, bounded memory, valid history, the next turn is accepted', { timeout: 60_000 }, async (t) => {
  // 1,024 deltas of 1 KiB, with multi-byte characters that SSE chunking may split.
  const piece = `é漢🙂${'abcdefghijklmnopqrstuvwxyz0123456789 '.repeat(30)}`.slice(0, 1020);
  const chunks = Array.from({ length: 1024 }, (_, i) => `${String(i).padStart(4, '0')}${piece}`);
  const reply = chunks.join('');
  assert.ok(reply.length >= MB);
  let calls = 0;
  const server = await startStrictApiServer({ reply: () => (++calls === 1 ? anthropicStream({ text: chunks }) : anthropicStream({ text: ['short answer'] })) });
  try {
    await withTempDir(async (dir) => {
      await initWorkspace({ appDir: APP_DIR, workspaceRoot: dir, userDir: testUserDir(dir) });
      const events: LegionEvent[] = [];
      const app = await composeApp(appContext(dir, { ANTHROPIC_API_KEY: 'sk-ant-test-big', ANTHROPIC_BASE_URL: server.url, LEGION_MODEL: 'claude-haiku-4-5' }), {
        onBus: (bus) => void bus.subscribeAll((e) => void (e.type === 'text-delta' ? events.push(e) : undefined)),
      });
      const before = rssMB();
      let peak = before;
      const sampler = setInterval(() => void (peak = Math.max(peak, rssMB())), 5);
      const sent = app.core.send('ur-agent', 'write me a megabyte');
      assert.ok(sent.ok);
      const text = await app.core.idle(sent.sessionId);
      clearInterval(sampler);
      peak = Math.max(peak, rssMB());
      assert.equal(app.core.lastOutcome(sent.sessionId)?.kind, 'done');
      assert.equal(text, reply, 'the whole reply, byte for byte');
      assert.equal(events.map((e) => (e.type === 'text-delta' ? e.text : '')).join(''), reply);
      assert.ok(peak - before < 150, `RSS grew by ${Math.round(peak - before)} MB for a 1 MB reply`);
      t.diagnostic(JSON.stringify({ replyChars: reply.length, deltas: events.length, peakRssGrowthMB: Math.round(peak - before) }));

      const again = app.core.send('ur-agent', 'now briefly');
      assert.ok(again.ok);
      assert.equal(await app.core.idle(again.sessionId), 'short answer');
      await app.close('done');
      assert.deepEqual(server.rejected().map((r) => r.rejected), []);
      // The reply (~300k tokens) cannot fit claude-haiku-4-5's 200k window: the next request is
      // compacted first (docs/context.md): summary requests, then the turn, which fits. The reply stays intact on disk.
      const turns = server.requests.filter((r) => !JSON.stringify(r.body.system ?? '').includes('You compact the history'));
      assert.equal(turns.length, 2);
      assert.ok(server.requests.length > 2, 'a summary request was made');
      assert.ok(JSON.stringify(turns[1]!.body).length < MB / 2, 'the next turn sends a compacted history');

      const file = layoutFor(dir).sessionFile(app.runId, sent.sessionId);
      const lines = await readJsonlLines(file);
      assert.deepEqual(lines.broken, []);
      const messages = lines.complete.map((l) => JSON.parse(l));
      assert.equal(textOf(messages[1]), reply);
      assert.deepEqual(planRepair(messages, 'now').problems, []);
      assert.ok((await readFile(file)).length > MB);
    });
  } finally {
    await server.close();
  }
});

const SESSIONS = 10_000;

test(`${SESSIONS} sessions in one run: written by the session store, resumed by the app with bounded memory, listed`, { timeout: 120_000 }, async (t) => {
  await withTempDir(async (dir) => {
    await initWorkspace({ appDir: APP_DIR, workspaceRoot: dir, userDir: testUserDir(dir) });
    const layout = layoutFor(dir);
    const run = await createRunStore(layout, systemClock, randomIds).create(new Date());
    const store = createSessionStore(layout, run.id, { clock: systemClock });
    let t0 = performance.now();
    for (let i = 0; i < SESSIONS; i++) {
      const { session } = store.open({ initiatorId: 'user', responderId: 'ur-agent', name: `s${i}` });
      session.append({ role: 'user', content: [{ type: 'text', text: `question ${i}` }], at: new Date().toISOString() });
    }
    const writeMs = performance.now() - t0;

    // The whole app resumes the run (every file read and validated), then takes a new turn.
    const before = rssMB();
    t0 = performance.now();
    const notices: string[] = [];
    await writeFile(join(dir, 'script.yaml'), 'version: 1\nreplies:\n  - { repeat: true, text: "noted {{lastText}}" }\n');
    const app = await composeApp(appContext(dir, { LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') }), {
      onBus: (bus) => void bus.subscribe('notice', (e) => void notices.push(e.message)),
    });
    const loadMs = performance.now() - t0;
    const grown = rssMB() - before;
    assert.equal(app.runId, run.id);
    assert.equal(app.core.sessions().length, SESSIONS);
    assert.deepEqual(notices.filter((n) => !/demo/i.test(n)), [], 'nothing damaged or repaired');
    assert.ok(grown < 300, `RSS grew by ${Math.round(grown)} MB resuming ${SESSIONS} sessions`);
    const sent = app.core.send('ur-agent', 'one more', `s${SESSIONS - 1}`);
    assert.ok(sent.ok);
    assert.equal(await app.core.idle(sent.sessionId), 'noted question 9999\none more', 'both user messages reach the model, merged');
    assert.equal(app.core.history(sent.sessionId).length, 3);
    await app.close('done');

    const listed = await runCli(['runs'], { cwd: dir, env: { HOME: dir }, appDir: APP_DIR });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`${run.id} .* ${SESSIONS} +${SESSIONS + 2} `));
    t.diagnostic(JSON.stringify({ sessions: SESSIONS, writeMs: Math.round(writeMs), resumeMs: Math.round(loadMs), resumeRssMB: Math.round(grown) }));
  });
});
