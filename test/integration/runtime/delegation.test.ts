import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startAppHarness } from '../../helpers/app-harness';
import { assertAllValid, eventsOf, toolResults } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';
import { z } from 'zod';
import type { Tool } from '../../../src/tools/types';

const LEAD = { id: 'lead', tools: ['communicator', 'list_participants'] };
const MID = { id: 'mid', tools: ['communicator'] };
const LEAF = { id: 'leaf', tools: ['whoami'] };

/** Reports the call chain and session the tool context carries. */
const whoami: Tool<Record<string, never>> = {
  name: 'whoami',
  description: 'test: report the call chain',
  schema: z.strictObject({}),
  keyArgument: () => undefined,
  async execute(_input, context) {
    return { content: `${context.chain.join('>')} in ${context.sessionId}` };
  },
};

test('communicator: delegation two levels deep; each final text is the caller\'s tool result; the chain travels', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [LEAD, MID, LEAF],
      tools: [whoami],
      script: `
replies:
  - { agent: lead, on: message, toolCalls: [{ name: communicator, input: { targetId: mid, message: "ask leaf", sessionName: docs } }] }
  - { agent: mid, on: message, toolCalls: [{ name: communicator, input: { targetId: leaf, message: "what is 6*7?" } }] }
  - { agent: leaf, on: message, toolCalls: [{ name: whoami, input: {} }] }
  - { agent: leaf, on: tool-result, text: "42" }
  - { agent: mid, on: tool-result, text: "leaf says {{lastText}}" }
  - { agent: lead, on: tool-result, text: "final: {{lastText}}" }
`,
    });
    const sent = h.core.send('lead', 'start');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'final: leaf says 42');
    const opened = eventsOf(h.events, 'session-open').map((e) => e.sessionId);
    assert.deepEqual(opened, ['session-user__lead__default', 'session-lead__mid__docs', 'session-mid__leaf__default']);
    const [chain] = toolResults(h.core.history('session-mid__leaf__default'));
    assert.equal(chain!.content, 'user>lead>mid>leaf in session-mid__leaf__default');
    assertAllValid(h.core);
    await h.close();
  });
});

test('communicator: two named sessions with the same agent run in parallel', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [LEAD, LEAF],
      script: `
replies:
  - agent: lead
    on: message
    toolCalls:
      - { name: communicator, input: { targetId: leaf, message: "part A", sessionName: a } }
      - { name: communicator, input: { targetId: leaf, message: "part B", sessionName: b } }
  - { agent: leaf, when: "part A", text: "A done", delayMs: 80, chunkSize: 100 }
  - { agent: leaf, when: "part B", text: "B done", delayMs: 80, chunkSize: 100 }
  - { agent: lead, on: tool-result, text: "both: {{lastText}}" }
`,
    });
    const sent = h.core.send('lead', 'split the work');
    assert.ok(sent.ok);
    const text = await h.core.idle(sent.sessionId);
    assert.match(text, /A done/);
    assert.match(text, /B done/);
    // Both leaf sessions were thinking before either answered.
    const statuses = eventsOf(h.events, 'agent-status').filter((e) => e.participantId === 'leaf');
    const firstIdle = statuses.findIndex((e) => e.status === 'idle');
    const thinkingBefore = new Set(statuses.slice(0, firstIdle).filter((e) => e.status === 'thinking').map((e) => e.sessionId));
    assert.deepEqual([...thinkingBefore].sort(), ['session-lead__leaf__a', 'session-lead__leaf__b']);
    await h.close();
  });
});

test('communicator: the depth cap returns an error result instead of going deeper', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      config: { runtime: { maxDepth: 2 } },
      agents: [LEAD, MID, { id: 'deep', tools: [] }],
      script: `
replies:
  - { agent: lead, on: message, toolCalls: [{ name: communicator, input: { targetId: mid, message: "go deeper" } }] }
  - { agent: mid, on: message, toolCalls: [{ name: communicator, input: { targetId: deep, message: "hello" } }] }
  - { agent: mid, on: tool-error, text: "mid could not: {{lastText}}" }
  - { agent: lead, on: tool-result, text: "{{lastText}}" }
`,
    });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    const text = await h.core.idle(sent.sessionId);
    assert.match(text, /depth cap reached: user → lead → mid → deep would be 3 levels deep \(runtime.maxDepth is 2\)/);
    assert.equal(h.core.sessions().some((s) => s.responderId === 'deep'), false);
    await h.close();
  });
});

test('communicator: re-entering a session already on the call chain is refused, not deadlocked', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [LEAD, { id: 'helper', tools: ['communicator'] }],
      script: `
replies:
  - { agent: lead, on: message, first: true, toolCalls: [{ name: communicator, input: { targetId: helper, message: "help" } }] }
  - { agent: helper, on: message, toolCalls: [{ name: communicator, input: { targetId: lead, message: "question back" } }] }
  - { agent: lead, when: "question back", toolCalls: [{ name: communicator, input: { targetId: helper, message: "loop" } }] }
  - { agent: lead, on: tool-error, when: "refused", text: "cannot loop: {{lastText}}" }
  - { agent: helper, on: tool-result, text: "helper heard: {{lastText}}" }
  - { agent: lead, on: tool-result, text: "end: {{lastText}}" }
`,
    });
    const sent = h.core.send('lead', 'start');
    assert.ok(sent.ok);
    const text = await h.core.idle(sent.sessionId);
    assert.match(text, /^end: helper heard: cannot loop: refused: session-lead__helper__default is already waiting on this call chain/);
    assertAllValid(h.core);
    await h.close();
  });
});

test('collective: an agent spawned mid-turn is usable at once; a retired agent refuses messages', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [{ id: 'maker', tools: ['spawn_agent', 'retire_agent', 'communicator', 'list_participants'] }],
      script: `
replies:
  - agent: maker
    on: message
    when: build
    toolCalls: [{ name: spawn_agent, input: { id: scribe, name: Scribe, description: writes, systemPrompt: "You write.", tools: [] } }]
  - { agent: maker, on: tool-result, when: "spawned scribe", toolCalls: [{ name: communicator, input: { targetId: scribe, message: "hi scribe" } }] }
  - { agent: scribe, text: "scribe here" }
  - { agent: maker, on: tool-result, when: "scribe here", text: "talked to {{lastText}}" }
  - { agent: maker, on: message, when: retire, toolCalls: [{ name: retire_agent, input: { id: scribe } }] }
  - { agent: maker, on: tool-result, when: "retired scribe", toolCalls: [{ name: communicator, input: { targetId: scribe, message: "still there?" } }] }
  - { agent: maker, on: tool-error, text: "{{lastText}}" }
`,
    });
    const first = h.core.send('maker', 'build a scribe');
    assert.ok(first.ok);
    assert.equal(await h.core.idle(first.sessionId), 'talked to scribe here');
    assert.ok(eventsOf(h.events, 'participant-change').some((e) => e.participantId === 'scribe' && e.change === 'added'));
    const { readFile } = await import('node:fs/promises');
    const saved = JSON.parse(await readFile(h.layout.participant('scribe'), 'utf8')) as { createdBy: string; status: string };
    assert.equal(saved.createdBy, 'maker');

    const second = h.core.send('maker', 'retire it');
    assert.ok(second.ok);
    assert.equal(await h.core.idle(second.sessionId), 'scribe is retired and takes no messages');
    assert.deepEqual(h.core.send('scribe', 'hello?'), { ok: false, error: 'scribe is retired and takes no messages' });
    assert.equal(h.registry.get('scribe')?.status, 'retired');
    await h.close();
  });
});

test('communicator: an agent asks the user; the question waits in the user lane; send() to that agent answers it', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [LEAD],
      script: `
replies:
  - { agent: lead, on: message, toolCalls: [{ name: communicator, input: { targetId: user, message: "Which color?", sessionName: default } }] }
  - { agent: lead, on: tool-result, text: "you chose {{lastText}}" }
`,
    });
    const sent = h.core.send('lead', 'paint it');
    assert.ok(sent.ok);
    await h.waitFor((e) => e.type === 'notice' && /lead asks you: Which color\?/.test(e.message));
    const lane = 'session-lead__user__default';
    assert.equal(h.core.sessions().find((s) => s.id === lane)?.awaitingUser, true);
    assert.deepEqual(h.core.history(lane).map((m) => [m.role, m.content[0]?.type === 'text' && m.content[0].text]), [['user', 'Which color?']]);
    const answered = h.core.send('lead', 'blue');
    assert.deepEqual(answered, { ok: true, sessionId: lane, queued: false });
    assert.equal(await h.core.idle(sent.sessionId), 'you chose blue');
    assert.deepEqual(h.core.reply(lane, 'again'), { ok: false, error: `no question is waiting for your answer in ${lane}` });
    assertAllValid(h.core);
    await h.close();
  });
});

test('communicator: headless, asking the user is an error result "no user available"', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      headless: { approve: 'deny' },
      agents: [LEAD],
      script: `
replies:
  - { agent: lead, on: message, toolCalls: [{ name: communicator, input: { targetId: user, message: "Which color?" } }] }
  - { agent: lead, on: tool-error, text: "{{lastText}}" }
`,
    });
    const sent = h.core.send('lead', 'paint it');
    assert.ok(sent.ok);
    assert.match(await h.core.idle(sent.sessionId), /^no user available/);
    const results = toolResults(h.core.history(sent.sessionId));
    assert.equal(results[0]!.isError, true);
    await h.close();
  });
});
