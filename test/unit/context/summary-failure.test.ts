import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createContextManager, type ContextSession } from '../../../src/context/manager';
import { summarizerFor } from '../../../src/runtime/context-hook';
import type { ContextRecord } from '../../../src/context/records';
import type { EventInput } from '../../../src/events/types';
import type { Message } from '../../../src/model/message';
import type { Provider, ProviderEvent } from '../../../src/providers/types';
import { toolTurns } from './helpers';

/**
 * A summary that fails (an overloaded 529, a 500, a thrown error) or comes back empty writes no
 * compaction: the previous state stands, a warning notice says so, and the call goes on with
 * eviction only, the recent tool output verbatim (docs/context.md). Through the manager and the
 * real summarizer, with a provider that answers summary requests as told.
 */
const SETTINGS = { compactAt: 0.6, keepRecent: 0.3, evictToolResultsOver: 1000, defaultWindow: 16_000 };

function providerAnswering(summary: () => ProviderEvent[] | Error): Provider & { summaries: number } {
  const p = {
    id: 'fake',
    summaries: 0,
    async *stream() {
      p.summaries++;
      const answer = summary();
      if (answer instanceof Error) throw answer;
      for (const e of answer) yield e;
    },
  };
  return p as unknown as Provider & { summaries: number };
}

function sessionOf(messages: Message[], records: ContextRecord[] = []): ContextSession & { records: ContextRecord[] } {
  return {
    id: 'session-user__coder__default', key: { initiatorId: 'user', responderId: 'coder', name: 'default' },
    records, messages: () => messages, contextRecords: () => records, appendContext: (r) => void records.push(r),
  };
}

async function prepareWith(provider: Provider, messages: Message[], records: ContextRecord[] = []) {
  const events: EventInput[] = [];
  const notices: string[] = [];
  const manager = createContextManager({
    settings: SETTINGS, windowOf: () => null, emit: (e) => events.push(e), notice: (level, message) => notices.push(`${level}: ${message}`), now: () => 'now',
  });
  const session = sessionOf(messages, records);
  const summarize = summarizerFor({ usage: () => undefined, notice: () => undefined, now: () => 'now' }, 'coder', session.id, { provider, model: 'm' });
  const prepared = await manager.prepare({ session, participantId: 'coder', system: 'You code.', tools: [], model: 'm', summarize, signal: new AbortController().signal });
  return { prepared, session, events, notices, state: manager.stateOf(session) };
}

const LAST_RESULT = (messages: readonly Message[]): string => {
  const block = messages.flatMap((m) => m.content).filter((b) => b.type === 'tool_result').at(-1)!;
  return block.type === 'tool_result' ? block.content : '';
};

const FAILURES: [string, () => ProviderEvent[] | Error][] = [
  ['an overloaded 529', () => [{ type: 'error', message: 'overloaded_error: Overloaded', status: 529, retryable: true }]],
  ['a 500', () => [{ type: 'error', message: 'api_error: Internal server error', status: 500 }]],
  ['a thrown error', () => new Error('socket hang up')],
  ['an empty summary', () => [{ type: 'text-delta', text: '  \n' }]],
  ['text then an error', () => [{ type: 'text-delta', text: 'half a summ' }, { type: 'error', message: 'stream cut', status: 500 }]],
];

for (const [what, answer] of FAILURES) {
  test(`${what} from the summarizer: no compaction, the previous state kept, a warning, eviction only with the recent tool output verbatim`, async () => {
    // Small results (not evictable) and many turns: only a summary would help; the last result is big and recent.
    const messages = toolTurns(200, 300);
    messages.push({ role: 'user', content: [{ type: 'text', text: 'read the big one' }], at: 'now' });
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: 'big', name: 'file_read', input: { path: 'big.txt' } }], at: 'now' });
    const big = `BIG:${'y'.repeat(3000)}`;
    messages.push({ role: 'user', content: [{ type: 'tool_result', toolUseId: 'big', content: big, isError: false }], at: 'now' });
    const previous: ContextRecord[] = [{ type: 'compaction', at: 'then', summary: 'EARLIER SUMMARY', firstKept: 40, tokensBefore: 9000, tokensAfter: 4000 }];
    const provider = providerAnswering(answer);
    const { prepared, session, events, notices, state } = await prepareWith(provider, messages, [...previous]);
    assert.ok(provider.summaries >= 1, 'a summary was asked for');
    assert.ok(prepared.ok);
    assert.deepEqual(session.records.filter((r) => r.type === 'compaction'), previous, 'no compaction written');
    assert.ok(!events.some((e) => e.type === 'compaction' && e.kind === 'summary'));
    assert.equal(state.summary, 'EARLIER SUMMARY', 'the previous summary stands');
    assert.equal(state.firstKept, 40);
    assert.ok(notices.some((n) => /^warn: coder: could not summarize the older history/.test(n)), notices.join(' | '));
    // The request goes on: the earlier summary first, the recent tool output as it was.
    assert.match(JSON.stringify(prepared.messages[0]), /EARLIER SUMMARY/);
    assert.equal(LAST_RESULT(prepared.messages), big);
  });
}

test('an ordinary compaction that cannot summarize (nothing older left) keeps the recent tool output whole', async () => {
  const messages: Message[] = [];
  messages.push({ role: 'user', content: [{ type: 'text', text: 'read the huge one' }], at: 'now' });
  messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: 'huge', name: 'file_read', input: { path: 'huge.txt' } }], at: 'now' });
  const huge = `HUGE:${'z'.repeat(50_000)}`;
  messages.push({ role: 'user', content: [{ type: 'tool_result', toolUseId: 'huge', content: huge, isError: false }], at: 'now' });
  // Everything before the call is summarized already: nothing older is left to summarize.
  const previous: ContextRecord[] = [{ type: 'compaction', at: 'then', summary: 'EARLIER SUMMARY', firstKept: 1, tokensBefore: 9000, tokensAfter: 4000 }];
  const provider = providerAnswering(() => [{ type: 'text-delta', text: 'a summary' }]);
  const { prepared, session } = await prepareWith(provider, messages, [...previous]);
  assert.ok(prepared.ok);
  assert.ok(!session.records.some((r) => r.type === 'eviction' && r.before >= messages.length), 'the recent result is not evicted');
  assert.equal(LAST_RESULT(prepared.messages), huge, 'the result the model just asked for is sent whole');
});
