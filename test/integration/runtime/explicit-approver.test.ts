import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startAppHarness } from '../../helpers/app-harness';
import { assertAllValid, eventsOf, toolResults } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';

/**
 * An explicit approver outside the call chain (docs/design.md#authorization, step 4): the rule names `reviewer`,
 * who is not on `user → worker`; the core starts a turn for it in
 * `session-user__reviewer__approvals` listing the request. What it leaves undecided climbs
 * to the user.
 */
const AGENTS = [
  { id: 'worker', tools: ['file_write'] },
  { id: 'reviewer', tools: ['resolve_approval'], approvalAuthority: ['file_*'] },
];

/** `.legion/rules.yaml`: writes ask the reviewer; everything else is allowed. */
const reviewerApproves = { file_write: { decision: 'ask', id: 'reviewer-approves', reason: 'writes go to the reviewer', approver: 'reviewer' } } as const;

const WORKER = `
  - { agent: worker, on: message, toolCalls: [{ name: file_write, input: { path: a.txt, content: A } }] }
  - { agent: worker, on: tool-result, text: "worker: {{lastText}}" }
  - { agent: worker, on: tool-error, text: "worker failed: {{lastText}}" }
`;

const REVIEWER_SESSION = 'session-user__reviewer__approvals';

test('explicit approver outside the chain: the reviewer gets a turn of its own and approves', async () => {
  await withTempDir(async (dir) => {
    const script = `
replies:${WORKER}
  - agent: reviewer
    on: message
    when: "apr-1: file_write a\\\\.txt"
    toolCalls: [{ name: resolve_approval, input: { requestId: apr-1, decision: approved, reason: "looks fine" } }]
  - { agent: reviewer, on: tool-result, text: "approved it" }
`;
    const h = await startAppHarness({ dir, agents: AGENTS, script, rules: reviewerApproves });
    const sent = h.core.send('worker', 'write a');
    assert.ok(sent.ok);
    assert.match(await h.core.idle(sent.sessionId), /^worker: /);
    assert.equal(await h.core.idle(REVIEWER_SESSION), 'approved it');

    assert.ok(existsSync(`${dir}/a.txt`));
    assert.deepEqual(eventsOf(h.events, 'approval-request').map((r) => [r.requestId, r.approverId]), [['apr-1', 'reviewer']]);
    const opened = eventsOf(h.events, 'session-open').find((e) => e.sessionId === REVIEWER_SESSION);
    assert.deepEqual(opened && [opened.initiatorId, opened.responderId, opened.name], ['user', 'reviewer', 'approvals']);
    const asked = h.core.history(REVIEWER_SESSION)[0]!;
    const text = asked.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    assert.match(text, /- apr-1: file_write a\.txt \(asked by worker; writes go to the reviewer\)/);
    assert.match(text, /resolve_approval/);
    assert.match(text, /apr-1: user → worker/);
    assert.equal(toolResults(h.core.history(REVIEWER_SESSION))[0]!.isError, undefined);
    assert.deepEqual(h.audit().filter((a) => a.requestId).map((a) => [a.requestId, a.decision, a.decidedBy]), [['apr-1', 'approved', 'agent:reviewer']]);
    assertAllValid(h.core);
    await h.close();
  });
});

test('explicit approver outside the chain: what the reviewer leaves undecided climbs to the user', async () => {
  await withTempDir(async (dir) => {
    const script = `
replies:${WORKER}
  - { agent: reviewer, on: message, text: "not my call" }
`;
    const h = await startAppHarness({ dir, agents: AGENTS, script, rules: reviewerApproves });
    const sent = h.core.send('worker', 'write a');
    assert.ok(sent.ok);
    await h.waitFor((e) => e.type === 'approval-request' && e.approverId === 'user');
    assert.equal(await h.core.idle(REVIEWER_SESSION), 'not my call');
    assert.deepEqual(h.core.pendingApprovals().map((p) => [p.requestId, p.approverId]), [['apr-1', 'user']]);
    assert.equal(existsSync(`${dir}/a.txt`), false);
    assert.deepEqual(h.core.resolveApprovals(['apr-1'], 'rejected', { reason: 'no' }), { ok: true });
    assert.equal(await h.core.idle(sent.sessionId), 'worker: rejected by user: no');
    assert.deepEqual(h.audit().filter((a) => a.requestId).map((a) => [a.requestId, a.decision, a.decidedBy]), [['apr-1', 'rejected', 'user']]);
    assertAllValid(h.core);
    await h.close();
  });
});

test('explicit approver outside the chain, headless: its turn runs, what it leaves goes to --approve', async () => {
  await withTempDir(async (dir) => {
    const script = `
replies:${WORKER}
  - { agent: reviewer, on: message, text: "not my call" }
`;
    const h = await startAppHarness({ dir, agents: AGENTS, script, rules: reviewerApproves, headless: { approve: 'all' } });
    const sent = h.core.send('worker', 'write a');
    assert.ok(sent.ok);
    assert.match(await h.core.idle(sent.sessionId), /^worker: /);
    assert.ok(existsSync(`${dir}/a.txt`));
    assert.deepEqual(eventsOf(h.events, 'approval-request').map((r) => [r.requestId, r.approverId]), [['apr-1', 'reviewer'], ['apr-1', 'user']]);
    assert.deepEqual(h.audit().filter((a) => a.requestId).map((a) => [a.requestId, a.decision, a.decidedBy]), [['apr-1', 'approved', 'headless']]);
    assertAllValid(h.core);
    await h.close();
  });
});
