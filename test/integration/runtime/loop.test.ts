import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startAppHarness } from '../../helpers/app-harness';
import { assertAllValid, eventsOf, probeTool, toolResults } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';
import type { Provider, ProviderEvent } from '../../../src/providers/types';

const WORKER = { id: 'worker', tools: ['probe', 'file_read', 'file_write'] };

test('loop: a turn streams text, runs a parallel batch of tool calls, answers all in one message, then ends', async () => {
  await withTempDir(async (dir) => {
    const probe = probeTool();
    const h = await startAppHarness({
      dir,
      agents: [WORKER],
      tools: [probe],
      script: `
replies:
  - agent: worker
    on: message
    text: "Checking three things at once."
    toolCalls:
      - { name: probe, input: { label: a, ms: 60 } }
      - { name: probe, input: { label: b, ms: 60 } }
      - { name: probe, input: { label: c, ms: 60 } }
  - agent: worker
    on: tool-result
    text: "All three done."
`,
    });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    assert.equal(sent.queued, false);
    const text = await h.core.idle(sent.sessionId);
    assert.equal(text, 'All three done.');
    assert.equal(probe.maxConcurrent, 3, 'independent calls run in parallel');
    const history = h.core.history(sent.sessionId);
    assert.deepEqual(history.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    const results = history[2]!.content;
    assert.equal(results.length, 3, 'one message with every result');
    assert.deepEqual(results.map((b) => b.type === 'tool_result' && b.content), ['probe a done', 'probe b done', 'probe c done']);
    assert.equal(eventsOf(h.events, 'tool-call-start').length, 3);
    assert.equal(eventsOf(h.events, 'tool-call-end').filter((e) => !e.isError).length, 3);
    assert.ok(eventsOf(h.events, 'text-delta').length > 0);
    assert.ok(eventsOf(h.events, 'usage').length === 2);
    const statuses = eventsOf(h.events, 'agent-status').map((e) => e.status);
    assert.deepEqual([...new Set(statuses)], ['thinking', 'running-tool', 'idle']);
    assert.equal(h.core.lastOutcome(sent.sessionId)?.kind, 'done');
    assertAllValid(h.core);
    // seq grows by one per event
    h.events.forEach((e, i) => i > 0 && assert.equal(e.seq, h.events[i - 1]!.seq + 1));
    await h.close();
  });
});

test('loop: calls on the same path run one after the other in call order', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [WORKER],
      script: `
replies:
  - agent: worker
    toolCalls:
      - { name: file_write, input: { path: notes.txt, content: first } }
      - { name: file_read, input: { path: notes.txt } }
      - { name: file_write, input: { path: notes.txt, content: second } }
  - { agent: worker, on: tool-result, text: done }
`,
    });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    await h.core.idle(sent.sessionId);
    const results = toolResults(h.core.history(sent.sessionId));
    assert.match(results[1]!.content, /first/, 'the read saw the first write');
    const { readFile } = await import('node:fs/promises');
    assert.equal(await readFile(`${dir}/notes.txt`, 'utf8'), 'second');
    await h.close();
  });
});

test('loop: maxIterations ends a turn that keeps calling tools, with a notice and a valid history', async () => {
  await withTempDir(async (dir) => {
    const probe = probeTool();
    const h = await startAppHarness({
      dir,
      agents: [WORKER],
      tools: [probe],
      config: { runtime: { maxIterations: 3 } },
      script: `
replies:
  - { agent: worker, repeat: true, text: "again", toolCalls: [{ name: probe, input: { label: x, ms: 1 } }] }
`,
    });
    const sent = h.core.send('worker', 'loop forever');
    assert.ok(sent.ok);
    await h.core.idle(sent.sessionId);
    const outcome = h.core.lastOutcome(sent.sessionId);
    assert.equal(outcome?.kind, 'done');
    assert.match(outcome?.kind === 'done' ? outcome.incomplete ?? '' : '', /maxIterations/);
    assert.equal(probe.calls.length, 3);
    assert.ok(eventsOf(h.events, 'notice').some((n) => n.level === 'warn' && /3 model calls/.test(n.message)));
    assertAllValid(h.core);
    await h.close();
  });
});

test('loop: invalid tool input gets an error result the model reads, and it corrects the call', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [WORKER],
      script: `
replies:
  - { agent: worker, on: message, toolCalls: [{ name: file_read, input: { path: 42 } }] }
  - { agent: worker, on: tool-error, when: "invalid input for file_read", toolCalls: [{ name: file_read, input: { path: hello.txt } }] }
  - { agent: worker, on: tool-result, text: "read it" }
`,
    });
    const { writeFile } = await import('node:fs/promises');
    await writeFile(`${dir}/hello.txt`, 'hi\n');
    const sent = h.core.send('worker', 'read');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'read it');
    const results = toolResults(h.core.history(sent.sessionId));
    assert.equal(results[0]!.isError, true);
    assert.match(results[0]!.content, /invalid input for file_read: path/);
    assert.equal(results[1]!.isError, undefined);
    assertAllValid(h.core);
    await h.close();
  });
});

/** A provider that replays given turns of events (for shapes the faux provider cannot script). */
function replay(turns: ProviderEvent[][]): Provider {
  let i = 0;
  return {
    id: 'replay',
    async *stream() {
      for (const event of turns[Math.min(i++, turns.length - 1)]!) yield event;
    },
  };
}

test('loop: arguments that are not JSON (inputError) become an error result; the tool never runs', async () => {
  await withTempDir(async (dir) => {
    const probe = probeTool();
    const h = await startAppHarness({
      dir,
      agents: [WORKER],
      tools: [probe],
      provider: replay([
        [{ type: 'tool-call', id: 't1', name: 'probe', input: '{"label": "x', inputError: 'Unexpected end of JSON input' }, { type: 'end', stopReason: 'tool_use' }],
        [{ type: 'text-delta', text: 'fixed' }, { type: 'end', stopReason: 'end_turn' }],
      ]),
    });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'fixed');
    const [result] = toolResults(h.core.history(sent.sessionId));
    assert.equal(result!.isError, true);
    assert.match(result!.content, /not valid JSON \(Unexpected end of JSON input\)/);
    assert.equal(probe.calls.length, 0);
    assertAllValid(h.core);
    await h.close();
  });
});

test('loop: a provider error mid-turn ends the turn (error status + notice), the session stays valid and usable', async () => {
  await withTempDir(async (dir) => {
    const probe = probeTool();
    const h = await startAppHarness({
      dir,
      agents: [WORKER],
      tools: [probe],
      script: `
replies:
  - { agent: worker, on: message, text: "working", toolCalls: [{ name: probe, input: { label: a } }] }
  - { agent: worker, on: tool-result, text: "half a sent", error: { message: "overloaded (529)", status: 529 } }
  - { agent: worker, on: message, text: "back again" }
`,
    });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    await h.core.idle(sent.sessionId);
    const outcome = h.core.lastOutcome(sent.sessionId);
    assert.deepEqual(outcome, { kind: 'failed', error: 'overloaded (529)' });
    assert.ok(eventsOf(h.events, 'agent-status').some((e) => e.status === 'error'));
    assert.ok(eventsOf(h.events, 'notice').some((n) => n.level === 'error' && /overloaded/.test(n.message)));
    assertAllValid(h.core);
    const again = h.core.send('worker', 'try again');
    assert.ok(again.ok);
    assert.equal(await h.core.idle(again.sessionId), 'back again');
    assertAllValid(h.core);
    await h.close();
  });
});

test('loop: a tool the agent does not hold is refused with an error result (audited), nothing runs', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [{ id: 'reader', tools: ['file_read'] }],
      script: `
replies:
  - { agent: reader, on: message, toolCalls: [{ name: shell, input: { command: "touch pwned" } }] }
  - { agent: reader, on: tool-error, text: "cannot" }
`,
    });
    const sent = h.core.send('reader', 'go');
    assert.ok(sent.ok);
    await h.core.idle(sent.sessionId);
    const [result] = toolResults(h.core.history(sent.sessionId));
    assert.match(result!.content, /tool "shell" is not available to reader/);
    const { existsSync } = await import('node:fs');
    assert.equal(existsSync(`${dir}/pwned`), false);
    assert.equal(h.audit()[0]?.decision, 'deny');
    await h.close();
  });
});

test('loop: a message to a busy session waits its turn (queued), in order', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [WORKER],
      script: `
replies:
  - { agent: worker, when: one, text: "first answer", delayMs: 30 }
  - { agent: worker, when: two, text: "second answer" }
`,
    });
    const a = h.core.send('worker', 'one');
    const b = h.core.send('worker', 'two');
    assert.ok(a.ok && b.ok);
    assert.equal(a.queued, false);
    assert.equal(b.queued, true);
    assert.equal(await h.core.idle(a.sessionId), 'second answer');
    const texts = h.core.history(a.sessionId).map((m) => m.content[0]?.type === 'text' ? m.content[0].text : '');
    assert.deepEqual(texts, ['one', 'first answer', 'two', 'second answer']);
    await h.close();
  });
});

test('loop: a long turn with many tool calls and delegations leaks no abort listeners (no MaxListeners warning)', async () => {
  await withTempDir(async (dir) => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const probe = probeTool();
    const h = await startAppHarness({
      dir,
      agents: [{ id: 'lead', tools: ['communicator', 'probe'] }, { id: 'leaf', tools: [] }],
      tools: [probe],
      config: { runtime: { maxIterations: 14 } },
      script: `
replies:
  - agent: lead
    on: message
    toolCalls: [${Array.from({ length: 12 }, (_, i) => `{ name: probe, input: { label: p${i}, ms: 1 } }`).join(', ')}]
  - { agent: lead, repeat: true, toolCalls: [{ name: communicator, input: { targetId: leaf, message: "ping" } }] }
  - { agent: leaf, repeat: true, text: "pong" }
`,
    });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    await h.core.idle(sent.sessionId);
    await new Promise((r) => setImmediate(r));
    process.off('warning', onWarning);
    assert.equal(probe.calls.length, 12);
    assert.equal(h.core.history('session-lead__leaf__default').length, 26, '13 delegations answered');
    assert.deepEqual(warnings, []);
    await h.close();
  });
});
