import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { planRepair } from '../../../src/model/repair';
import type { LegionEvent } from '../../../src/events/types';
import { MAY_HAVE_RUN } from '../../../src/runtime/format';
import { assertAllValid, eventsOf, toolResults } from '../../helpers/runtime-assert';
import { startAppHarness, type Harness } from '../../helpers/app-harness';
import { withTempDir } from '../../helpers/tmp';

/**
 * Call chains across a restart: the lead's batch delegates to two workers in parallel (each
 * asks the user to write a file), writes its todo list and reads a file. Quitting keeps all
 * three batches open; the next start re-attaches the lead's communicator calls to the
 * resumed workers, re-reads the file, and does not repeat the todo write.
 */
const SCRIPT = `
replies:
  - agent: lead
    when: "split"
    toolCalls:
      - { name: communicator, input: { targetId: worker, sessionName: a, message: "write a.txt" } }
      - { name: communicator, input: { targetId: worker, sessionName: b, message: "write b.txt" } }
      - { name: todo_write, input: { todos: [{ id: "1", content: "split", status: in_progress }] } }
      - { name: file_read, input: { path: seed.txt } }
  - { agent: lead, on: tool-error, repeat: true, text: "lead saw: {{lastText}}" }
  - { agent: lead, on: tool-result, repeat: true, text: "lead: all good" }
  - { agent: worker, when: "write a.txt", toolCalls: [{ name: file_write, input: { path: a.txt, content: A } }] }
  - { agent: worker, when: "write b.txt", toolCalls: [{ name: file_write, input: { path: b.txt, content: B } }] }
  - { agent: worker, on: tool-error, repeat: true, text: "worker could not: {{lastText}}" }
  - { agent: worker, on: tool-result, repeat: true, text: "worker wrote it" }
`;

function start(dir: string): Promise<Harness> {
  writeFileSync(join(dir, 'seed.txt'), 'seed text\n');
  return startAppHarness({
    dir, script: SCRIPT, rules: { file_write: 'ask' },
    agents: [{ id: 'lead', tools: ['communicator', 'todo_write', 'file_read'] }, { id: 'worker', tools: ['file_write'] }],
  });
}

const LEAD = 'session-user__lead__default';
const A = 'session-lead__worker__a';
const B = 'session-lead__worker__b';

/** First process: both workers wait on the user's approval; then quit. Returns request ids by session. */
async function quitWithTwoPending(dir: string): Promise<Map<string, string>> {
  const first = await start(dir);
  assert.ok(first.core.send('lead', 'split the work').ok);
  await waitUntil(() => first.core.pendingApprovals().length === 2);
  const ids = new Map(first.core.pendingApprovals().map((p) => [p.sessionId, p.requestId]));
  await first.close('quit');
  for (const id of [LEAD, A, B]) {
    const history = first.core.history(id);
    assert.equal(history.at(-1)!.role, 'assistant', `${id} stays open`);
    assert.deepEqual(planRepair(history, new Date().toISOString()).problems, [], id);
  }
  return ids;
}

/** A safety bound only (15 s): every wait ends on an event long before, however loaded the machine. */
async function waitUntil(check: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('waitUntil: timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('restart, two parallel delegations waiting: both re-offered; approve one, reject one; the lead gets both replies, re-reads, does not repeat its todo write', async () => {
  await withTempDir(async (dir) => {
    const ids = await quitWithTwoPending(dir);
    const second = await start(dir);
    await waitUntil(() => eventsOf(second.events, 'approval-request').length === 2);
    assert.deepEqual(second.core.pendingApprovals().map((p) => p.requestId).sort(), [...ids.values()].sort());
    second.core.resolveApprovals([ids.get(A)!], 'approved');
    second.core.resolveApprovals([ids.get(B)!], 'rejected', { reason: 'not b' });
    const text = await second.core.idle(LEAD);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'A');
    assert.equal(existsSync(join(dir, 'b.txt')), false);
    const results = toolResults(second.core.history(LEAD));
    assert.equal(results.length, 4, 'one result per call of the lead\'s batch');
    assert.match(results[0]!.content, /worker wrote it/);
    assert.match(results[1]!.content, /worker could not: rejected by user: not b/);
    assert.deepEqual([results[2]!.content, results[2]!.isError], [MAY_HAVE_RUN, true], 'the todo write may have run: not repeated');
    assert.match(results[3]!.content, /seed text/, 'the read runs again');
    assert.match(text, /^lead saw:/);
    assertAllValid(second.core);
    assert.equal(eventsOf(second.events, 'message-add').filter((e) => e.sessionId === A || e.sessionId === B).filter((e) => e.message.role === 'user' && e.message.content.some((b) => b.type === 'text')).length, 0, 'no message re-sent to the workers');
    await second.close();
  });
});

test('restart, chain: Esc on the lead withdraws both re-offered requests and answers every open batch; quitting again while a chain waits keeps it for the next start', async () => {
  await withTempDir(async (dir) => {
    await quitWithTwoPending(dir);
    // Quit again at once: everything stays open, the third start still has both requests.
    const second = await start(dir);
    await waitUntil(() => eventsOf(second.events, 'approval-request').length === 2);
    await second.close('quit again');
    for (const id of [LEAD, A, B]) assert.equal(second.core.history(id).at(-1)!.role, 'assistant', `${id} stays open again`);

    const third = await start(dir);
    await waitUntil(() => eventsOf(third.events, 'approval-request').length === 2);
    third.core.cancel(LEAD);
    await third.core.idle(LEAD);
    await waitUntil(() => third.core.pendingApprovals().length === 0);
    const resolved = eventsOf(third.events, 'approval-resolve') as Extract<LegionEvent, { type: 'approval-resolve' }>[];
    assert.deepEqual(resolved.map((r) => r.decidedBy), ['cancel', 'cancel']);
    assertAllValid(third.core);
    await third.close();
    const fourth = await start(dir);
    assert.equal(eventsOf(fourth.events, 'approval-request').length, 0);
    assertAllValid(fourth.core);
    await fourth.close();
  });
});

test('restart, chain: Esc on one resumed worker interrupts only it; the lead hears so and finishes with the other reply', async () => {
  await withTempDir(async (dir) => {
    const ids = await quitWithTwoPending(dir);
    const second = await start(dir);
    await waitUntil(() => eventsOf(second.events, 'approval-request').length === 2);
    second.core.cancel(B);
    second.core.resolveApprovals([ids.get(A)!], 'approved');
    await second.core.idle(LEAD);
    const results = toolResults(second.core.history(LEAD));
    assert.match(results[0]!.content, /worker wrote it/);
    assert.match(results[1]!.content, /interrupted/);
    assertAllValid(second.core);
    await second.close();
  });
});

/**
 * The lead may approve writes: the worker's request is handed to it (its communicator call
 * returns early, the delegation is detached), and the lead, instead of deciding, asks the
 * user for a write of its own. Quitting there keeps the lead's lane (it waits on its own
 * request) but not the worker (its caller's call was already answered): the worker's request
 * expires, and the resumed lead is told that the worker was cut off.
 */
const APPROVER = `
replies:
  - { agent: lead, when: "delegate", toolCalls: [{ name: communicator, input: { targetId: worker, message: "write it" } }] }
  - { agent: lead, when: "has not finished", toolCalls: [{ name: file_write, input: { path: own.txt, content: own } }] }
  - { agent: lead, on: tool-error, repeat: true, text: "lead saw: {{lastText}}" }
  - { agent: lead, on: tool-result, repeat: true, text: "lead: {{lastText}}" }
  - { agent: worker, when: "write it", toolCalls: [{ name: file_write, input: { path: x.txt, content: x } }] }
  - { agent: worker, on: tool-result, repeat: true, text: "worker wrote it" }
`;

test('restart: a request handed to an agent approver (its caller\'s call returned early) cannot resume and expires; the caller resumes its own request and is told the worker was cut off', async () => {
  await withTempDir(async (dir) => {
    const startApprover = (): Promise<Harness> => startAppHarness({
      dir, script: APPROVER, rules: { file_write: 'ask' },
      agents: [
        { id: 'lead', tools: ['communicator', 'resolve_approval', 'file_write'], approvalAuthority: ['file_write'] },
        { id: 'worker', tools: ['file_write'] },
      ],
    });
    const first = await startApprover();
    const sent = first.core.send('lead', 'delegate the write');
    assert.ok(sent.ok);
    const handed = await first.waitFor((e) => e.type === 'approval-request' && e.participantId === 'worker');
    assert.equal(handed.type === 'approval-request' && handed.approverId, 'lead');
    const own = await first.waitFor((e) => e.type === 'approval-request' && e.participantId === 'lead');
    await first.close('quit');
    assert.equal(first.core.history(sent.sessionId).at(-1)!.role, 'assistant', 'the lead waits on its own request: kept open');
    assert.equal(first.core.history('session-lead__worker__default').at(-1)!.role, 'user', 'the worker is answered at the quit');

    const second = await startApprover();
    const expired = eventsOf(second.events, 'approval-resolve');
    assert.deepEqual(expired.map((r) => [r.requestId, r.reason]), [[handed.type === 'approval-request' ? handed.requestId : '', 'interrupted, ask again']]);
    assert.deepEqual(second.core.pendingApprovals().map((p) => p.requestId), [own.type === 'approval-request' ? own.requestId : '']);
    second.core.resolveApprovals([second.core.pendingApprovals()[0]!.requestId], 'approved');
    await second.core.idle(sent.sessionId);
    const notes = second.core.history(sent.sessionId).flatMap((m) => m.content).filter((b) => b.type === 'text' && b.text.startsWith('[Legion restarted'));
    assert.equal(notes.length, 1);
    assert.match((notes[0] as { text: string }).text, /interrupted: session-lead__worker__default\./);
    assert.equal(readFileSync(join(dir, 'own.txt'), 'utf8'), 'own');
    assert.equal(existsSync(join(dir, 'x.txt')), false);
    assertAllValid(second.core);
    await second.close();
  });
});
