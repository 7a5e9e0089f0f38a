import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startAppHarness } from '../../helpers/app-harness';
import { assertAllValid, eventsOf, toolResults } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';

/**
 * The approval cascade: worker asks for three writes in one message; the nearest caller
 * with authority (lead) receives them in its communicator result, approves one, rejects
 * one, leaves one; at the end of lead's turn the third climbs to the user.
 */
const AGENTS = [
  { id: 'lead', tools: ['communicator', 'resolve_approval'], approvalAuthority: ['file_write'] },
  { id: 'worker', tools: ['file_write'] },
];

const SCRIPT = `
replies:
  - { agent: lead, on: message, toolCalls: [{ name: communicator, input: { targetId: worker, message: "write three files" } }] }
  - agent: worker
    on: message
    toolCalls:
      - { name: file_write, input: { path: a.txt, content: A } }
      - { name: file_write, input: { path: b.txt, content: B } }
      - { name: file_write, input: { path: c.txt, content: C } }
  - agent: lead
    on: tool-result
    when: "apr-1.*apr-2.*apr-3"
    toolCalls:
      - { name: resolve_approval, input: { requestId: apr-1, decision: approved, reason: "fine" } }
      - { name: resolve_approval, input: { requestId: apr-2, decision: rejected, reason: "not b" } }
  - { agent: lead, on: tool-result, when: "rejected apr-2", text: "I leave apr-3 to the user." }
  - { agent: worker, on: tool-result, text: "worker finished: {{lastText}}" }
  - { agent: lead, on: message, when: "reply from worker", text: "all done" }
`;

test('cascade: an agent approver approves one, rejects one, leaves one that climbs to the user (headless deny)', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({ dir, agents: AGENTS, script: SCRIPT, rules: { file_write: 'ask' }, headless: { approve: 'deny' } });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'all done');

    const requests = eventsOf(h.events, 'approval-request');
    assert.deepEqual(requests.map((r) => [r.requestId, r.approverId]), [['apr-1', 'lead'], ['apr-2', 'lead'], ['apr-3', 'lead'], ['apr-3', 'user']]);
    assert.deepEqual(requests[0]!.chain, ['user', 'lead', 'worker']);
    const resolved = eventsOf(h.events, 'approval-resolve').map((r) => [r.requestId, r.decision, r.decidedBy]);
    assert.deepEqual(resolved, [['apr-1', 'approved', 'agent:lead'], ['apr-2', 'rejected', 'agent:lead'], ['apr-3', 'rejected', 'headless']]);

    assert.ok(existsSync(`${dir}/a.txt`));
    assert.equal(existsSync(`${dir}/b.txt`), false);
    assert.equal(existsSync(`${dir}/c.txt`), false);
    const workerResults = toolResults(h.core.history('session-lead__worker__default'));
    assert.equal(workerResults[0]!.isError, undefined);
    assert.equal(workerResults[1]!.content, 'rejected by agent:lead: not b');
    assert.match(workerResults[2]!.content, /^rejected by headless/);

    // lead's communicator result listed the requests; the worker's reply arrived later as a note.
    const leadHistory = h.core.history(sent.sessionId);
    const early = toolResults(leadHistory)[0]!.content;
    assert.match(early, /worker has not finished yet/);
    assert.match(early, /- apr-1: file_write a\.txt \(asked by worker/);
    assert.ok(leadHistory.some((m) => m.role === 'user' && m.content.some((b) => b.type === 'text' && /\[reply from worker, session session-lead__worker__default\]\nworker finished/.test(b.text))));

    assert.deepEqual(h.audit().filter((a) => a.requestId).map((a) => [a.requestId, a.decision, a.decidedBy]), [
      ['apr-1', 'approved', 'agent:lead'], ['apr-2', 'rejected', 'agent:lead'], ['apr-3', 'rejected', 'headless'],
    ]);
    assertAllValid(h.core);
    await h.close();
  });
});

test('cascade: with a user present, the climbing request waits in the queue until the user approves it', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({ dir, agents: AGENTS, script: SCRIPT, rules: { file_write: 'ask' } });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    await h.waitFor((e) => e.type === 'approval-request' && e.approverId === 'user');
    const pending = h.core.pendingApprovals();
    assert.deepEqual(pending.map((p) => [p.requestId, p.approverId, p.toolName]), [['apr-3', 'user', 'file_write']]);
    assert.deepEqual(h.core.resolveApprovals(['nope'], 'approved').ok, false);
    assert.deepEqual(h.core.resolveApprovals(['apr-3'], 'approved', { reason: 'ok by me' }), { ok: true });
    assert.equal(await h.core.idle(sent.sessionId), 'all done');
    assert.ok(existsSync(`${dir}/c.txt`));
    assert.equal(eventsOf(h.events, 'approval-resolve').at(-1)?.decidedBy, 'user');
    assertAllValid(h.core);
    await h.close();
  });
});

test('headless: --approve all approves what reaches the user, --approve deny rejects it; deny rules deny in both', async () => {
  for (const approve of ['all', 'deny'] as const) {
    await withTempDir(async (dir) => {
      const h = await startAppHarness({
        dir,
        agents: [{ id: 'worker', tools: ['file_write', 'file_delete'] }],
        rules: { file_write: 'ask', file_delete: 'deny' },
        headless: { approve },
        script: `
replies:
  - agent: worker
    toolCalls:
      - { name: file_write, input: { path: out.txt, content: hi } }
      - { name: file_delete, input: { path: out.txt } }
  - { agent: worker, on: tool-result, text: "ok" }
  - { agent: worker, on: tool-error, text: "partly" }
`,
      });
      const sent = h.core.send('worker', 'go');
      assert.ok(sent.ok);
      await h.core.idle(sent.sessionId);
      assert.equal(existsSync(`${dir}/out.txt`), approve === 'all', `--approve ${approve}`);
      const [write, del] = toolResults(h.core.history(sent.sessionId));
      assert.equal(write!.isError, approve === 'all' ? undefined : true);
      assert.match(del!.content, /^denied by rule test-deny/);
      const resolve = eventsOf(h.events, 'approval-resolve');
      assert.deepEqual(resolve.map((r) => [r.decision, r.decidedBy]), [[approve === 'all' ? 'approved' : 'rejected', 'headless']]);
      assert.deepEqual(h.audit().map((a) => [a.toolName, a.decision, a.decidedBy]), [
        ['file_delete', 'deny', 'rule'],
        ['file_write', approve === 'all' ? 'approved' : 'rejected', 'headless'],
      ]);
      await h.close();
    });
  }
});

test('denial loop: after 3 denials in a row the agent gets a note and the user a notice', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [{ id: 'worker', tools: ['file_delete'] }],
      rules: { file_delete: 'deny' },
      script: `
replies:
  - { agent: worker, on: message, toolCalls: [{ name: file_delete, input: { path: a } }, { name: file_delete, input: { path: b } }] }
  - { agent: worker, on: tool-error, when: "^denied", toolCalls: [{ name: file_delete, input: { path: c } }] }
  - { agent: worker, on: tool-error, when: "change approach", text: "I will ask instead" }
`,
    });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'I will ask instead');
    assert.ok(eventsOf(h.events, 'notice').some((n) => n.level === 'warn' && /keeps being denied/.test(n.message)));
    await h.close();
  });
});

test('triage: a confident LLM approval resolves the request (decidedBy llm) without asking anyone', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      config: { escalation: { llm: { enabled: true } } },
      agents: [{ id: 'worker', tools: ['file_write'] }],
      rules: { file_write: 'ask' },
      triage: async () => ({ approve: true, reasoning: 'an ordinary note' }),
      script: `
replies:
  - { agent: worker, toolCalls: [{ name: file_write, input: { path: note.md, content: hi } }] }
  - { agent: worker, on: tool-result, text: "written" }
`,
    });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'written');
    assert.deepEqual(eventsOf(h.events, 'approval-resolve').map((r) => [r.decision, r.decidedBy, r.reason]), [['approved', 'llm', 'an ordinary note']]);
    assert.equal(h.audit()[0]?.triageReasoning, 'an ordinary note');
    await h.close();
  });
});
