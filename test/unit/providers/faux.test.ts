import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFauxProvider, loadFauxScript, parseFauxScript, type FauxScript } from '../../../src/providers/faux';
import type { Message } from '../../../src/model/message';
import type { ProviderEvent, ProviderRequest } from '../../../src/providers/types';
import { collect, request, terminalEvents, userText } from '../../helpers/provider-run';

const FIXTURES = fileURLToPath(new URL('../../fixtures/faux/', import.meta.url));
const APP_CONFIG = fileURLToPath(new URL('../../../config/', import.meta.url));

function script(text: string): FauxScript {
  const r = parseFauxScript(text, 'inline.yaml');
  if (!r.ok) throw new Error(r.error);
  return r.script;
}

async function load(path: string): Promise<FauxScript> {
  const r = await loadFauxScript(path);
  if (!r.ok) throw new Error(r.error);
  return r.script;
}

const as = (participantId: string, sessionId = `s-${participantId}`) => ({ participantId, sessionId });

test('text streams in chunks of code points (emoji intact), then usage and end', async () => {
  const p = createFauxProvider({ script: script('replies:\n  - text: "ab👩‍💻cdé"\n    chunkSize: 2\n') });
  const r = await collect(p, request({ model: 'faux' }));
  const deltas = r.events.filter((e) => e.type === 'text-delta').map((e) => (e as { text: string }).text);
  assert.equal(deltas.join(''), 'ab👩‍💻cdé');
  assert.ok(deltas.every((d) => !/[\uD800-\uDBFF]$/.test(d)), 'no delta ends inside a surrogate pair');
  assert.equal(deltas[1], '👩\u200D');
  assert.deepEqual(r.events.slice(-2).map((e) => e.type), ['usage', 'end']);
  assert.deepEqual(r.last, { type: 'end', stopReason: 'end_turn' });
});

test('tool calls get deterministic ids and tool_use stop reason', async () => {
  const text = 'replies:\n  - text: go\n    toolCalls:\n      - { name: file_list }\n      - { name: file_read, input: { path: "{{agent}}.md" } }\n';
  const req = request({ meta: as('worker') });
  const first = await collect(createFauxProvider({ script: script(text) }), req);
  const second = await collect(createFauxProvider({ script: script(text) }), req);
  const calls = first.events.filter((e) => e.type === 'tool-call');
  assert.deepEqual(
    calls.map((c) => c.type === 'tool-call' && [c.name, c.input]),
    [['file_list', {}], ['file_read', { path: 'worker.md' }]],
  );
  assert.deepEqual(first.events, second.events, 'same script, same request, same events');
  const ids = calls.map((c) => (c as { id: string }).id);
  assert.equal(new Set(ids).size, 2);
  assert.match(ids[0]!, /^toolu_faux_[0-9a-f]{6}_1_1$/);
  assert.deepEqual(first.last, { type: 'end', stopReason: 'tool_use' });
});

test('scripted usage is reported as given; the script model names the usage', async () => {
  const p = createFauxProvider({
    script: script('model: faux\nreplies:\n  - text: x\n    usage: { inputTokens: 10, outputTokens: 2, cacheWriteTokens: 5 }\n'),
  });
  const r = await collect(p, request({ model: 'claude-sonnet-4-5' }));
  assert.deepEqual(r.events.find((e) => e.type === 'usage'), {
    type: 'usage', model: 'faux', inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 5,
  });
});

test('an error reply streams its text then ends with exactly one error', async () => {
  const p = createFauxProvider({
    script: script('replies:\n  - text: partial\n    error: { message: "overloaded ({{agent}})", status: 529, retryable: true }\n'),
  });
  const r = await collect(p, request({ meta: as('a') }));
  assert.equal(r.text, 'partial');
  assert.deepEqual(terminalEvents(r.events), [{ type: 'error', message: 'overloaded (a)', status: 529, retryable: true }]);
  assert.deepEqual(r.last, terminalEvents(r.events)[0]);
});

test('nothing matches: the fallback reply, not a crash', async () => {
  const p = createFauxProvider({ script: script('replies:\n  - { agent: other, text: x }\n') });
  const r = await collect(p, request({ meta: as('ghost') }));
  assert.equal(r.text, '(faux) no scripted reply for ghost');
  assert.deepEqual(r.last, { type: 'end', stopReason: 'end_turn' });
});

test('abort mid-stream stops at once with "aborted"', async () => {
  const p = createFauxProvider({ script: script(`replies:\n  - text: "${'x'.repeat(200)}"\n    chunkSize: 1\n    delayMs: 20\n`) });
  const controller = new AbortController();
  const r = await collect(p, request(), controller.signal, (e) => {
    if (e.type === 'text-delta' && !controller.signal.aborted) controller.abort();
  });
  // Aborted at the first delta: a provider that ignored the abort would stream the whole reply.
  assert.ok(r.text.length < 5, `stopped early (${r.text.length} chars)`);
  assert.deepEqual(r.last, { type: 'error', message: 'aborted', retryable: false });
  assert.equal(terminalEvents(r.events).length, 1);
});

test('an already aborted signal yields only the error', async () => {
  const controller = new AbortController();
  controller.abort();
  const r = await collect(createFauxProvider({ script: script('replies:\n  - text: hi\n') }), request(), controller.signal);
  assert.deepEqual(r.events, [{ type: 'error', message: 'aborted', retryable: false }]);
});

test('delays pace the chunks', async () => {
  // The sleep is injected: what is checked is the pacing asked for, not a wall-clock duration.
  const slept: number[] = [];
  const sleep = async (ms: number): Promise<void> => void slept.push(ms);
  const p = createFauxProvider({ script: script('replies:\n  - text: abcd\n    chunkSize: 1\n    delayMs: 15\n'), sleep });
  const r = await collect(p, request());
  assert.equal(r.text, 'abcd');
  assert.deepEqual(slept, [15, 15, 15, 15]);
});

test('a multi-agent script: each agent gets its own sequence, templates see the conversation', async () => {
  const p = createFauxProvider({ script: await load(join(FIXTURES, 'multi-agent.yaml')) });
  const lead1 = await collect(p, request({ meta: as('lead'), messages: [userText('plan the release')] }));
  const call = lead1.events.find((e) => e.type === 'tool-call') as Extract<ProviderEvent, { type: 'tool-call' }>;
  assert.deepEqual(call.input, { targetId: 'helper', message: 'Summarize: plan the release' });

  const helper = await collect(p, request({ meta: as('helper'), messages: [userText('Summarize: plan the release')] }));
  assert.equal(helper.text, 'Summary: done.');
  assert.equal((helper.events.find((e) => e.type === 'usage') as { cacheReadTokens: number }).cacheReadTokens, 50);

  const history: Message[] = [
    userText('plan the release'),
    { role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: call.name, input: call.input }], at: '' },
    { role: 'user', content: [{ type: 'tool_result', toolUseId: call.id, content: 'Summary: done.' }], at: '' },
  ];
  const lead2 = await collect(p, request({ meta: as('lead'), messages: history }));
  assert.equal(lead2.text, 'helper said: Summary: done.');
  const lead3 = await collect(p, request({ meta: as('lead'), messages: [...history, { role: 'assistant', content: [{ type: 'text', text: 'x' }], at: '' }, userText('more?')] }));
  assert.equal(lead3.text, 'again');
  const helper2 = await collect(p, request({ meta: as('helper'), messages: [userText('Summarize again')] }));
  assert.match(helper2.text, /no scripted reply for helper/);
});

/** Plays the demo conversation the way the runtime would, with tool results supplied by the test. */
async function playDemo(writeResult: { content: string; isError?: boolean }): Promise<{ transcript: string[]; calls: string[] }> {
  const s = await load(join(APP_CONFIG, 'demo-script.yaml'));
  const p = createFauxProvider({ script: { ...s, defaults: { chunkSize: 64, delayMs: 0 } } });
  const transcript: string[] = [];
  const calls: string[] = [];
  const turn = async (agent: string, messages: Message[]): Promise<Message> => {
    const req: ProviderRequest = request({ meta: as(agent), messages, model: 'faux' });
    const r = await collect(p, req);
    assert.equal(terminalEvents(r.events).length, 1);
    transcript.push(`${agent}: ${r.text}`);
    const uses = r.events.flatMap((e) => (e.type === 'tool-call' ? [{ type: 'tool_use' as const, id: e.id, name: e.name, input: e.input }] : []));
    calls.push(...uses.map((u) => `${agent}:${u.name}`));
    return { role: 'assistant', content: [{ type: 'text', text: r.text }, ...uses], at: '' };
  };
  const result = (m: Message, content: string, isError = false): Message => {
    const use = m.content.find((b) => b.type === 'tool_use') as { id: string };
    return { role: 'user', content: [{ type: 'tool_result', toolUseId: use.id, content, isError }], at: '' };
  };
  const ur: Message[] = [userText('Write down our release plan')];
  ur.push(await turn('ur-agent', ur));
  ur.push(result(ur.at(-1)!, 'user (user), ur-agent (agent), resource-agent (agent), scribe (agent): writes notes'));
  ur.push(await turn('ur-agent', ur));
  const delegation = ur.at(-1)!.content.find((b) => b.type === 'tool_use') as { input: { message: string; targetId: string; sessionName: string } };
  assert.equal(delegation.input.targetId, 'scribe');
  assert.equal(delegation.input.sessionName, 'notes');
  assert.match(delegation.input.message, /Write down our release plan/);
  const sc: Message[] = [userText(delegation.input.message)];
  sc.push(await turn('scribe', sc));
  const write = sc.at(-1)!.content.find((b) => b.type === 'tool_use') as { input: { path: string; content: string } };
  assert.equal(write.input.path, 'notes/demo.md');
  assert.match(write.input.content, /^# Legion demo note/);
  assert.match(write.input.content, /Write down our release plan/);
  sc.push(result(sc.at(-1)!, writeResult.content, writeResult.isError));
  sc.push(await turn('scribe', sc));
  ur.push(result(ur.at(-1)!, transcript.at(-1)!.replace(/^scribe: /, '')));
  ur.push(await turn('ur-agent', ur));
  ur.push(userText('thanks! can you also fix the tests?'));
  await turn('ur-agent', ur);
  return { transcript, calls };
}

test('the demo script: participants, delegation, a written note, a summary, a polite follow-up', async () => {
  const { transcript, calls } = await playDemo({ content: 'Created notes/demo.md (700 bytes, 14 lines)' });
  assert.deepEqual(calls, ['ur-agent:list_participants', 'ur-agent:communicator', 'scribe:file_write']);
  assert.match(transcript[0]!, /demo mode/);
  assert.match(transcript[3]!, /Saved the note/);
  assert.match(transcript[4]!, /Done: \*\*scribe\*\* wrote `notes\/demo\.md`/);
  assert.match(transcript[5]!, /demo mode.*ANTHROPIC_API_KEY/s);
});

test('the demo script when the write is rejected', async () => {
  const { transcript } = await playDemo({ content: 'rejected by user: not now', isError: true });
  assert.match(transcript[3]!, /could not save `notes\/demo\.md`.*rejected by user/);
  assert.match(transcript[4]!, /not approved: nothing changed on disk/);
});
