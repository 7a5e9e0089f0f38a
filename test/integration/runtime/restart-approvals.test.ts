import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { planRepair } from '../../../src/model/repair';
import { toolUsesOf, type Message } from '../../../src/model/message';
import type { LegionEvent } from '../../../src/events/types';
import { assertAllValid, eventsOf, toolResults } from '../../helpers/runtime-assert';
import { startRestartHarness } from '../../helpers/restart-fixture';
import { startAppHarness, type Harness } from '../../helpers/app-harness';
import { withTempDir } from '../../helpers/tmp';

/** No problem appending cannot fix, in every session (an open last batch is allowed: it resumes). */
function assertNoProblems(h: Harness): void {
  for (const s of h.core.sessions()) assert.deepEqual(planRepair(h.core.history(s.id), new Date().toISOString()).problems, [], s.id);
}

const approvalRequests = (events: readonly LegionEvent[]) => eventsOf(events, 'approval-request');

/** First process: the worker's batch waits on the user's approval of the write; then quit. */
async function quitWhilePending(dir: string): Promise<{ sessionId: string; requestId: string; toolUseId: string; first: Harness }> {
  const first = await startRestartHarness(dir);
  const sent = first.core.send('worker', 'write it');
  assert.ok(sent.ok);
  const request = (await first.waitFor((e) => e.type === 'approval-request')) as Extract<LegionEvent, { type: 'approval-request' }>;
  await first.close('quit');
  return { sessionId: sent.sessionId, requestId: request.requestId, toolUseId: request.toolUseId, first };
}

test('restart: an approval pending at quit is offered again under the same id; approving runs the batch and the turn goes on', async () => {
  await withTempDir(async (dir) => {
    const { sessionId, requestId, toolUseId, first } = await quitWhilePending(dir);
    // Quitting leaves the batch open on disk (no "interrupted" results), the request pending.
    const onDisk = first.core.history(sessionId);
    assert.equal(onDisk.at(-1)!.role, 'assistant');
    assert.deepEqual(toolUsesOf(onDisk.at(-1)!).map((u) => u.name), ['file_read', 'file_write']);
    assertNoProblems(first);
    assert.equal(eventsOf(first.events, 'approval-resolve').length, 0);
    assert.equal(first.audit().filter((a) => a.requestId === requestId).length, 0, 'a request left pending by a quit is not audited as decided');
    const approvalLines = readFileSync(first.layout.approvals(first.core.runId), 'utf8').trim().split('\n');
    assert.equal(approvalLines.length, 1);

    const second = await startRestartHarness(dir);
    assert.deepEqual(second.core.pendingApprovals().map((p) => [p.requestId, p.toolUseId, p.sessionId]), [[requestId, toolUseId, sessionId]]);
    assert.deepEqual(approvalRequests(second.events).map((e) => e.requestId), [requestId], 're-offered (approval-request again, same id)');
    assert.equal(eventsOf(second.events, 'message-add').length, 0, 'nothing appended while it waits');
    assert.equal(second.core.sessions().find((s) => s.id === sessionId)?.status, 'waiting-approval');
    assert.ok(eventsOf(second.events, 'notice').some((n) => /worker resumes its turn/.test(n.message)));
    assertNoProblems(second);

    assert.deepEqual(second.core.resolveApprovals([requestId], 'approved'), { ok: true });
    assert.match(await second.core.idle(sessionId), /^wrote it after .*seed text.*Created x\.txt/s);
    assert.equal(readFileSync(join(dir, 'x.txt'), 'utf8'), 'hello');
    const history = second.core.history(sessionId);
    const results = toolResults(history.slice(onDisk.length - 1));
    assert.deepEqual(results.map((r) => [r.content.includes('seed text') || r.content.includes('x.txt'), r.isError ?? false]), [[true, false], [true, false]]);
    assert.equal(history.length, onDisk.length + 2, 'one results message, then the final answer');
    assertAllValid(second.core);
    assert.deepEqual(second.audit().filter((a) => a.requestId === requestId).map((a) => [a.decision, a.decidedBy]), [['approved', 'user']]);
    await second.close();
  });
});

test('restart: rejecting the re-offered request answers the write with the rejection; the read still runs; the turn goes on', async () => {
  await withTempDir(async (dir) => {
    const { sessionId, requestId } = await quitWhilePending(dir);
    const second = await startRestartHarness(dir);
    assert.deepEqual(second.core.resolveApprovals([requestId], 'rejected', { reason: 'not today' }), { ok: true });
    const text = await second.core.idle(sessionId);
    assert.match(text, /^could not: .*seed text/s);
    assert.match(text, /rejected by user: not today/);
    assert.equal(existsSync(join(dir, 'x.txt')), false);
    assertAllValid(second.core);
    await second.close();
  });
});

test('restart: quitting again while the resumed turn waits keeps it open again; a third start still resumes it', async () => {
  await withTempDir(async (dir) => {
    const { sessionId, requestId } = await quitWhilePending(dir);
    const second = await startRestartHarness(dir);
    await second.close('quit again');
    assert.equal(second.core.history(sessionId).at(-1)!.role, 'assistant');
    assertNoProblems(second);
    const third = await startRestartHarness(dir);
    assert.deepEqual(third.core.pendingApprovals().map((p) => p.requestId), [requestId]);
    third.core.resolveApprovals([requestId], 'approved');
    assert.match(await third.core.idle(sessionId), /^wrote it/);
    assertAllValid(third.core);
    await third.close();
  });
});

test('restart: Esc on a resumed turn withdraws its request and leaves a valid history; the next start has nothing to resume', async () => {
  await withTempDir(async (dir) => {
    const { sessionId, requestId } = await quitWhilePending(dir);
    const second = await startRestartHarness(dir);
    second.core.cancel(sessionId);
    await second.core.idle(sessionId);
    assert.deepEqual(second.core.pendingApprovals(), []);
    const resolved = eventsOf(second.events, 'approval-resolve');
    assert.deepEqual(resolved.map((r) => [r.requestId, r.decidedBy]), [[requestId, 'cancel']]);
    assert.ok(toolResults(second.core.history(sessionId)).every((r) => r.content === 'interrupted by the user'));
    assertAllValid(second.core);
    await second.close();
    const third = await startRestartHarness(dir);
    assert.equal(approvalRequests(third.events).length, 0);
    assertAllValid(third.core);
    await third.close();
  });
});

test('restart: a nested request (user → lead → worker) is offered again; approving it finishes the worker, whose reply reaches the lead\'s resumed communicator call', async () => {
  await withTempDir(async (dir) => {
    const first = await startRestartHarness(dir);
    const sent = first.core.send('lead', 'delegate the write');
    assert.ok(sent.ok);
    const request = (await first.waitFor((e) => e.type === 'approval-request')) as Extract<LegionEvent, { type: 'approval-request' }>;
    assert.deepEqual(request.chain, ['user', 'lead', 'worker']);
    await first.close('quit');
    const workerSession = 'session-lead__worker__default';
    // Both batches stay open: the lead's communicator call, the worker's batch.
    for (const id of [sent.sessionId, workerSession]) assert.equal(first.core.history(id).at(-1)!.role, 'assistant', id);
    assertNoProblems(first);

    const second = await startRestartHarness(dir);
    assert.deepEqual(second.core.pendingApprovals().map((p) => [p.requestId, p.sessionId, p.chain.join(' → ')]), [[request.requestId, workerSession, 'user → lead → worker']]);
    assert.ok(eventsOf(second.events, 'notice').some((n) => /lead resumes its turn in session-user__lead__default: 1 approval request\(s\) of worker/.test(n.message)));
    await second.waitFor((e) => e.type === 'approval-request' && e.requestId === request.requestId);
    assert.equal(eventsOf(second.events, 'message-add').length, 0, 'no new message to the worker: the call re-attaches');
    const status = new Map(second.core.sessions().map((x) => [x.id, x.status]));
    assert.deepEqual([status.get(workerSession), status.get(sent.sessionId)], ['waiting-approval', 'running-tool']);
    assert.deepEqual(second.core.resolveApprovals([request.requestId], 'approved'), { ok: true });
    assert.equal(await second.core.idle(sent.sessionId), 'the worker is done');
    assert.match(second.core.history(workerSession).at(-1)!.content[0]!.type === 'text' ? (second.core.history(workerSession).at(-1)!.content[0] as { text: string }).text : '', /^wrote it after/);
    assert.equal(readFileSync(join(dir, 'x.txt'), 'utf8'), 'hello');
    const leadResults = toolResults(second.core.history(sent.sessionId));
    assert.equal(leadResults.length, 1);
    assert.match(leadResults[0]!.content, /wrote it after/);
    assertAllValid(second.core);
    assert.deepEqual(second.audit().filter((a) => a.requestId === request.requestId).map((a) => a.decision), ['approved']);
    await second.close();
  });
});

test('restart: a nested request whose caller\'s communicator call was already answered cannot resume: it expires "interrupted, ask again"', async () => {
  await withTempDir(async (dir) => {
    const first = await startRestartHarness(dir);
    const sent = first.core.send('lead', 'delegate the write');
    assert.ok(sent.ok);
    const request = (await first.waitFor((e) => e.type === 'approval-request')) as Extract<LegionEvent, { type: 'approval-request' }>;
    await first.close('quit');
    // The lead's call answered "interrupted" (as an older Legion did at quit): the chain is broken.
    const [call] = toolUsesOf(first.core.history(sent.sessionId).at(-1)!);
    appendFileSync(first.layout.sessionFile(first.core.runId, sent.sessionId), JSON.stringify({
      role: 'user', content: [{ type: 'tool_result', toolUseId: call!.id, content: 'interrupted by the user while waiting on worker', isError: true }], at: new Date().toISOString(),
    }) + '\n');

    const second = await startRestartHarness(dir);
    assert.deepEqual(second.core.pendingApprovals(), []);
    const resolved = eventsOf(second.events, 'approval-resolve');
    assert.deepEqual(resolved.map((r) => [r.requestId, r.decision, r.reason]), [[request.requestId, 'rejected', 'interrupted, ask again']]);
    assert.deepEqual(second.audit().map((a) => [a.requestId, a.decision, a.decidedBy]), [[request.requestId, 'expired', 'cancel']]);
    assert.equal(approvalRequests(second.events).length, 0, 'nothing re-offered');
    assertAllValid(second.core);
    const lines = readFileSync(second.layout.approvals(second.core.runId), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; decision?: string });
    assert.equal(lines.at(-1)!.decision, 'expired');
    await second.close();
  });
});

test('restart, headless: a resumed request is decided per --approve (all: approved and run; deny: rejected) and the turn finishes', async () => {
  for (const approve of ['all', 'deny'] as const) {
    await withTempDir(async (dir) => {
      const { sessionId, requestId } = await quitWhilePending(dir);
      const second = await startRestartHarness(dir, { headless: { approve } });
      const text = await second.core.idle(sessionId);
      const resolved = eventsOf(second.events, 'approval-resolve');
      assert.deepEqual(resolved.map((r) => [r.requestId, r.decision, r.decidedBy]), [[requestId, approve === 'all' ? 'approved' : 'rejected', 'headless']]);
      assert.match(text, approve === 'all' ? /^wrote it/ : /^could not: .*no user to ask/s);
      assert.equal(existsSync(join(dir, 'x.txt')), approve === 'all');
      assertAllValid(second.core);
      await second.close();
    });
  }
});

test('restart: a message sent to the resumed session waits for the resumed turn, then runs', async () => {
  await withTempDir(async (dir) => {
    const { sessionId, requestId } = await quitWhilePending(dir);
    const second = await startRestartHarness(dir);
    const again = second.core.send('worker', 'something else');
    assert.deepEqual(again, { ok: true, sessionId, queued: true });
    second.core.resolveApprovals([requestId], 'approved');
    await second.core.idle(sessionId);
    const texts = second.core.history(sessionId).filter((m: Message) => m.role === 'user' && m.content.some((b) => b.type === 'text')).map((m) => m.content[0]);
    assert.deepEqual(texts.map((b) => b?.type === 'text' && b.text), ['write it', 'something else']);
    assertAllValid(second.core);
    await second.close();
  });
});

test('restart: a resumed call whose stored input holds a scrubbed secret ([REDACTED]) is not run with the placeholder; its request is withdrawn', async () => {
  await withTempDir(async (dir) => {
    const script = `
replies:
  - { agent: worker, when: "store the key", toolCalls: [{ name: file_write, input: { path: key.txt, content: "key=[REDACTED]" } }] }
  - { agent: worker, on: tool-error, text: "could not: {{lastText}}" }
`;
    const start = (): Promise<Harness> => startAppHarness({ dir, script, agents: [{ id: 'worker', tools: ['file_write'] }], rules: { file_write: 'ask' } });
    const first = await start();
    const sent = first.core.send('worker', 'store the key');
    assert.ok(sent.ok);
    await first.waitFor((e) => e.type === 'approval-request');
    await first.close('quit');
    const second = await start();
    assert.match(await second.core.idle(sent.sessionId), /could not: .*secret value that is not kept on disk/s);
    assert.deepEqual(second.core.pendingApprovals(), []);
    assert.deepEqual(eventsOf(second.events, 'approval-resolve').map((r) => r.decidedBy), ['cancel']);
    assert.equal(existsSync(join(dir, 'key.txt')), false);
    assertAllValid(second.core);
    await second.close();
  });
});
