import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRecallTool } from '../../../src/context/recall-tool';
import type { ContextRecord } from '../../../src/context/records';
import { makeToolContext } from '../../helpers/tool-context';
import { assistant, call, result, user } from './helpers';

const history = [
  user('please read config.toml'), call('c1', 'file_read', { path: 'config.toml' }), result('c1', `[server]\nport = 8080\n${'x'.repeat(9000)}\nsecret_flag = ON`),
  assistant('The port is 8080.'), user('thanks, now the logs'), assistant('Nothing in the logs.'),
];
const records: ContextRecord[] = [{ type: 'compaction', at: 't', summary: 'read config', firstKept: 4, tokensBefore: 10, tokensAfter: 2 }];

const recallTool = createRecallTool({ sessionHistory: (id) => (id === 's1' ? { messages: history, records } : undefined) });

async function recall(input: Record<string, unknown>, sessionId = 's1') {
  const context = makeToolContext('/tmp', { sessionId });
  const parsed = recallTool.schema.safeParse(input);
  if (!parsed.success) return { content: parsed.error.issues[0]!.message, isError: true };
  return recallTool.execute(parsed.data, context);
}

test('recall finds text from before the compaction, newest first, with message numbers and marks', async () => {
  const r = await recall({ query: 'PORT 8080' });
  assert.ok(!r.isError);
  assert.match(r.content, /^2 message\(s\) match/);
  const lines = r.content.split('\n').slice(1);
  assert.match(lines[0]!, /^message 3 · assistant \(compacted\): The port is 8080\./);
  assert.match(lines[1]!, /^message 2 · user \(compacted\): …?\[tool result\] \[server\] port = 8080/);
});

test('recall { message } pages through a long (evicted) output whole', async () => {
  const first = await recall({ message: 2 });
  assert.match(first.content, /^message 2 · user \(compacted\)\n\[tool result\]\n\[server\]/);
  const next = /call recall with message 2, offset (\d+)/.exec(first.content);
  assert.ok(next, first.content.slice(-200));
  const second = await recall({ message: 2, offset: Number(next[1]) });
  assert.match(second.content, /secret_flag = ON$/);
});

test('recall: no match, a bad message number, bad input and an unknown session are clear one-line answers', async () => {
  assert.match((await recall({ query: 'kubernetes' })).content, /^nothing in this session's 6 messages contains all of: kubernetes$/);
  const bad = await recall({ message: 99 });
  assert.ok(bad.isError);
  assert.equal(bad.content, 'no message 99: this session has messages 0–5');
  assert.match((await recall({})).content, /give a query or a message number/);
  assert.ok((await recall({ query: 'x' }, 's2')).isError);
});
