import '../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startVendorServer, sse, fixture, json, type VendorServer } from '../../helpers/vendor-server';
import { anthropicStream, openaiStream } from '../../helpers/vendor-streams';
import { createAnthropicProvider } from '../../../src/providers/anthropic';
import { createOpenAIProvider } from '../../../src/providers/openai';
import type { Provider } from '../../../src/providers/types';
import { startAppHarness } from '../../helpers/app-harness';
import { assertAllValid, eventsOf } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';
import { sessionLines } from './helpers';

/**
 * Overflow recovery with the real SDKs (docs/context.md): the local server answers a turn with
 * the vendor's exact "prompt is too long" body; the runtime compacts harder (a summary request
 * with no tools) and retries once, and the turn succeeds.
 */
let server: VendorServer;
/** Summary requests (the compaction's, recognised by their instructions) are answered apart from the queue. */
const isSummary = (body: any): boolean => JSON.stringify(body ?? '').includes('You compact the history');
let summaryRequests: any[] = [];
let summaryReply: (() => string) | null = null;
before(async () => {
  server = await startVendorServer({
    route: (body) => {
      if (!summaryReply || !isSummary(body)) return undefined;
      summaryRequests.push(body);
      return sse(summaryReply());
    },
  });
});
after(() => server.close());

const vendors: Array<{
  name: string;
  provider: () => Provider;
  tooLong: () => unknown;
  reply: (text: string) => string;
  messagesOf: (body: any) => unknown[];
  toolsOf: (body: any) => unknown;
}> = [
  {
    name: 'anthropic',
    provider: () => createAnthropicProvider({ apiKey: 'sk-ant-test', baseURL: server.anthropicURL, maxRetries: 2, idleTimeoutMs: 5000 }),
    tooLong: () => JSON.parse(fixture('anthropic/error-400-prompt-too-long.json')),
    reply: (text) => anthropicStream({ text: [text], usage: { input: 50 } }),
    messagesOf: (body) => body.messages,
    toolsOf: (body) => body.tools,
  },
  {
    name: 'openai',
    provider: () => createOpenAIProvider({ apiKey: 'sk-test', baseURL: server.openaiURL, maxRetries: 2, idleTimeoutMs: 5000 }),
    tooLong: () => JSON.parse(fixture('openai/error-400-context-length-exceeded.json')),
    reply: (text) => openaiStream({ text: [text], usage: { prompt: 50, completion: 3 } }),
    messagesOf: (body) => body.messages.filter((m: { role: string }) => m.role !== 'system'),
    toolsOf: (body) => body.tools,
  },
];

for (const vendor of vendors) {
  test(`${vendor.name}: a 400 "prompt is too long" compacts harder and the one retry succeeds`, async () => {
    await withTempDir(async (dir) => {
      const h = await startAppHarness({ dir, agents: [{ id: 'talker', tools: [] }], provider: vendor.provider() });
      summaryRequests = [];
      summaryReply = () => vendor.reply('SUMMARY: six parts of context were given.');
      const start = server.requests.length;
      let sessionId = '';
      for (let i = 0; i < 6; i++) {
        server.enqueue(sse(vendor.reply(`noted ${i}`)));
        const sent = h.core.send('talker', `part ${i}: ${'context '.repeat(400)}`);
        assert.ok(sent.ok);
        sessionId = sent.sessionId;
        assert.equal(await h.core.idle(sessionId), `noted ${i}`);
      }
      server.enqueue(json(400, vendor.tooLong()), sse(vendor.reply('recovered')));
      const sent = h.core.send('talker', 'what now?');
      assert.ok(sent.ok);
      const got = await h.core.idle(sessionId);
      assert.equal(got, 'recovered', JSON.stringify(eventsOf(h.events, 'notice').map((n) => n.message)));
      const turnRequests = server.requests.slice(start).filter((r) => !isSummary(r.body));
      assert.equal(turnRequests.length, 8, 'six turns, the refused call, exactly one retry');
      const [refused, retry] = turnRequests.slice(6);
      assert.ok(refused && retry);
      // Summary requests offer no tools and ask for the summary.
      assert.ok(summaryRequests.length >= 1);
      for (const body of summaryRequests) {
        assert.ok(vendor.toolsOf(body) === undefined || (vendor.toolsOf(body) as unknown[]).length === 0);
        assert.match(JSON.stringify(body), /Summarize the history below/);
      }
      // The retry is smaller and starts with the summary.
      assert.ok(JSON.stringify(retry.body).length < JSON.stringify(refused.body).length / 2, 'the retry is much smaller');
      assert.match(JSON.stringify(vendor.messagesOf(retry.body)[0]), /Context summary: messages 0–\d+.*SUMMARY: six parts/);
      // One compaction record on disk; a notice says what happened; the history is whole and valid.
      const records = sessionLines(h.layout, h.events[0]!.runId, sessionId).filter((l) => l.type === 'compaction');
      assert.equal(records.length, 1);
      assert.ok(eventsOf(h.events, 'notice').some((n) => /too long for the model.*compacting harder and retrying once/.test(n.message)));
      assert.equal(h.core.history(sessionId).length, 14);
      assertAllValid(h.core);
      summaryReply = null;
      await h.close();
    });
  });
}

test('a second "prompt is too long" after the retry ends the turn with the error; the session stays usable', async () => {
  await withTempDir(async (dir) => {
    const v = vendors[0]!;
    const h = await startAppHarness({ dir, agents: [{ id: 'talker', tools: [] }], provider: v.provider() });
    server.enqueue(sse(v.reply('noted')));
    const first = h.core.send('talker', `part: ${'context '.repeat(400)}`);
    assert.ok(first.ok);
    await h.core.idle(first.sessionId);
    server.enqueue(json(400, v.tooLong()), json(400, v.tooLong()));
    const again = h.core.send('talker', 'more');
    assert.ok(again.ok);
    await h.core.idle(first.sessionId);
    assert.equal(h.core.lastOutcome(first.sessionId)?.kind, 'failed');
    server.enqueue(sse(v.reply('fine again')));
    const third = h.core.send('talker', 'still there?');
    assert.ok(third.ok);
    assert.equal(await h.core.idle(first.sessionId), 'fine again');
    assertAllValid(h.core);
    await h.close();
  });
});
