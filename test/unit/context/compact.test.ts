import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compact, viewTokens, type CompactInput, type Summarize } from '../../../src/context/compact';
import { EMPTY_CONTEXT, type ContextRecord } from '../../../src/context/records';
import { requestView } from '../../../src/context/view';
import { isCutPoint } from '../../../src/context/cut';
import { toolTurns } from './helpers';

const settings = { compactAt: 0.6, keepRecent: 0.3, evictToolResultsOver: 1000 };

function input(over: Partial<CompactInput> & Pick<CompactInput, 'messages' | 'window'>): CompactInput & { committed: ContextRecord[]; asked: string[] } {
  const committed: ContextRecord[] = [];
  const asked: string[] = [];
  const summarize: Summarize = async (request) => {
    asked.push(request.text);
    return { ok: true, text: `summary #${asked.length}` };
  };
  const tokensBefore = viewTokens(over.messages, over.state ?? EMPTY_CONTEXT, settings, 100);
  return {
    state: EMPTY_CONTEXT, settings, fixedTokens: 100, tokensBefore, harder: false,
    who: { initiator: 'user', responder: 'coder', session: 'default' }, now: () => 'now',
    commit: (r) => committed.push(r), summarize, signal: new AbortController().signal, committed, asked, ...over,
  };
}

test('compaction evicts old big tool results first and stops there when that is enough', async () => {
  // 20 turns with 4 kB results: ~26k tokens; a 40k window compacts at 24k; eviction brings it to a few k.
  const messages = toolTurns(20, 4000);
  const i = input({ messages, window: 40_000 });
  const out = await compact(i);
  assert.equal(out.kind, 'done');
  assert.deepEqual(i.committed.map((r) => r.type), ['eviction']);
  assert.equal(i.asked.length, 0, 'no summary request');
  assert.ok(out.tokensAfter < 0.45 * 40_000, `${out.tokensAfter}`);
  const view = requestView(messages, out.state, settings.evictToolResultsOver);
  const stubbed = view.flatMap((m) => m.content).filter((b) => b.type === 'tool_result' && b.content.startsWith('[evicted: 3.9 kB of file_read output'));
  assert.ok(stubbed.length > 10);
  // The recent part is verbatim.
  assert.equal(view[view.length - 2]!.content[0]!.type === 'tool_result' && (view[view.length - 2]!.content[0] as { content: string }).content.length, 4000);
});

test('compaction then summarizes the older part (no tools) and keeps the recent part verbatim, cut at a valid point', async () => {
  // Small results (not evictable) and many turns: only a summary helps.
  const messages = toolTurns(200, 300);
  const i = input({ messages, window: 16_000 });
  const out = await compact(i);
  assert.equal(out.kind, 'done');
  const record = i.committed.find((r) => r.type === 'compaction');
  assert.ok(record && record.type === 'compaction');
  assert.ok(isCutPoint(messages, record.firstKept));
  assert.ok(i.asked.length >= 1);
  assert.match(i.asked[0]!, /### message 0 · user\nquestion 0/);
  assert.equal(record.summary, `summary #${i.asked.length}`);
  // Chunks are folded: each later request carries the previous summary.
  if (i.asked.length > 1) assert.match(i.asked[1]!, /Summary of the earlier history[\s\S]*summary #1/);
  assert.ok(out.tokensAfter <= 0.3 * 16_000 + 500, `${out.tokensAfter}`);
  assert.equal(record.tokensAfter, out.tokensAfter);
  const view = requestView(messages, out.state, 1000);
  assert.match((view[0]!.content[0] as { text: string }).text, /recall tool/);
  assert.deepEqual(view.slice(1), messages.slice(record.firstKept));
});

test('a failed or cancelled summary keeps what eviction did and appends no compaction', async () => {
  const messages = toolTurns(200, 300);
  const controller = new AbortController();
  const i = input({
    messages, window: 16_000, signal: controller.signal,
    summarize: async () => {
      controller.abort();
      return { ok: false, error: 'aborted', aborted: true };
    },
  });
  const out = await compact(i);
  assert.equal(out.kind, 'failed');
  assert.ok(out.kind === 'failed' && out.aborted);
  assert.ok(i.committed.every((r) => r.type === 'eviction'));
});

test('harder (after "prompt is too long"): keeps half as much, and stubs even recent big results when nothing else helps', async () => {
  const messages = toolTurns(3, 20_000).slice(0, -1); // ends with a huge result, in the recent part
  const i = input({ messages, window: 8000, harder: true });
  const out = await compact(i);
  assert.equal(out.kind, 'done');
  assert.ok(out.tokensAfter < 8000 * 0.6, `${out.tokensAfter}`);
  const last = i.committed[i.committed.length - 1]!;
  assert.equal(last.type, 'eviction');
  assert.ok(last.type === 'eviction' && last.before === messages.length);
});
