import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAppHarness } from '../../helpers/app-harness';
import { eventsOf, toolResults } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';
import { makeRepo, userGit, userRepoState } from '../../unit/worktrees/helpers';

/**
 * Worktree isolation end to end (docs/worktrees.md): lead sends alice and bob off in parallel,
 * each in its own worktree; both write shared.txt differently and a file of their own. Their work
 * comes back as merge requests; the first approved merges, the second conflicts and says so.
 */
const AGENTS = [
  { id: 'lead', tools: ['communicator'] },
  { id: 'alice', tools: ['file_write', 'file_read'] },
  { id: 'bob', tools: ['file_write', 'file_read'] },
];

const SCRIPT = `
replies:
  - agent: lead
    on: message
    toolCalls:
      - { name: communicator, input: { targetId: alice, sessionName: a, isolation: worktree, message: "alice's part" } }
      - { name: communicator, input: { targetId: bob, sessionName: b, isolation: worktree, message: "bob's part" } }
  - agent: alice
    on: message
    toolCalls:
      - { name: file_read, input: { path: README.md } }
      - { name: file_write, input: { path: shared.txt, content: "one\\ntwo by alice\\nthree\\n" } }
      - { name: file_write, input: { path: alice.txt, content: "alice was here\\n" } }
  - agent: bob
    on: message
    toolCalls:
      - { name: file_write, input: { path: shared.txt, content: "one\\ntwo by bob\\nthree\\n" } }
      - { name: file_write, input: { path: bob.txt, content: "bob was here\\n" } }
  - { agent: alice, on: tool-result, text: "alice finished" }
  - { agent: bob, on: tool-result, text: "bob finished" }
  - { agent: lead, on: tool-result, text: "lead done" }
`;

const ALICE = 'session-lead__alice__a';
const BOB = 'session-lead__bob__b';

test('two isolated agents in parallel: workspace untouched until merged, the first merge applies, the second is a conflict told to its caller', async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    writeFileSync(join(dir, 'README.md'), '# demo\nuser draft, not committed\n');
    const before = userRepoState(dir);
    const h = await startAppHarness({ dir, agents: AGENTS, script: SCRIPT });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    await h.waitFor((e) => e.type === 'approval-request' && e.toolName === 'merge' && e.sessionId === ALICE, 30_000);
    await h.waitFor((e) => e.type === 'approval-request' && e.toolName === 'merge' && e.sessionId === BOB, 30_000);

    // Nothing reached the workspace yet; the agents worked in their worktrees.
    assert.equal(readFileSync(join(dir, 'shared.txt'), 'utf8'), 'one\ntwo\nthree\n');
    assert.equal(existsSync(join(dir, 'alice.txt')), false);
    assert.equal(readFileSync(join(dir, '.legion/worktrees', ALICE, 'alice.txt'), 'utf8'), 'alice was here\n');
    // The user's uncommitted change was visible to the isolated agent.
    assert.match(toolResults(h.core.history(ALICE))[0]!.content, /user draft, not committed/);
    // The agent was told where it works.
    const told = h.core.history(ALICE)[0]!;
    assert.ok(told.content.some((b) => b.type === 'text' && b.text.includes(`own git worktree at ${join(dir, '.legion/worktrees', ALICE)}`)));

    const pending = h.core.pendingApprovals();
    assert.deepEqual(pending.map((p) => [p.toolName, p.sessionId, p.approverId]).sort(), [['merge', ALICE, 'user'], ['merge', BOB, 'user']]);
    const aliceRequest = pending.find((p) => p.sessionId === ALICE)!;
    const bobRequest = pending.find((p) => p.sessionId === BOB)!;
    const input = aliceRequest.input as { session: string; files: { path: string; status: string }[]; diffstat: string };
    assert.equal(input.session, ALICE);
    assert.deepEqual(input.files.map((f) => `${f.status} ${f.path}`).sort(), ['added alice.txt', 'modified shared.txt']);
    assert.equal(input.diffstat, '2 files changed, 2 insertions(+), 1 deletion(-)');

    assert.deepEqual(h.core.resolveApprovals([aliceRequest.requestId], 'approved'), { ok: true });
    await h.waitFor((e) => e.type === 'notice' && e.sessionId === ALICE && /merged into the workspace/.test(e.message), 30_000);
    assert.equal(readFileSync(join(dir, 'shared.txt'), 'utf8'), 'one\ntwo by alice\nthree\n');
    assert.equal(readFileSync(join(dir, 'alice.txt'), 'utf8'), 'alice was here\n');
    // The merge took a checkpoint first (undo takes it back like a batch of writes); the isolated
    // batches took theirs in their worktrees (worktree-checkpoints.test.ts).
    const mergeCheckpoint = await h.waitFor((e) => e.type === 'checkpoint' && e.sessionId === ALICE && e.files !== undefined && e.toolUseIds[0]!.startsWith('merge-'), 30_000) as { files: string[]; toolUseIds: string[] };
    assert.deepEqual([...mergeCheckpoint.files].sort(), ['alice.txt', 'shared.txt']);

    assert.deepEqual(h.core.resolveApprovals([bobRequest.requestId], 'approved'), { ok: true });
    assert.equal(await h.core.idle(sent.sessionId), 'lead done');
    const results = toolResults(h.core.history(sent.sessionId));
    assert.match(results[0]!.content, /alice finished\n\n\[worktree\] merged into the workspace \(uncommitted\): 2 files changed/);
    assert.match(results[1]!.content, /bob finished\n\n\[worktree\] conflict in shared\.txt: bob's work \(branch legion\/session-lead__bob__b\)/);
    assert.match(results[1]!.content, /<<<<<<< /);
    assert.equal(existsSync(join(dir, 'bob.txt')), false, 'a conflict merges nothing');

    // The conflict waits in the queue, marked, and cannot be approved.
    const conflict = h.core.pendingApprovals().find((p) => p.sessionId === BOB)!;
    assert.deepEqual((conflict.input as { conflict: string[] }).conflict, ['shared.txt']);
    const refused = h.core.resolveApprovals([conflict.requestId], 'approved');
    assert.equal(refused.ok, false);
    assert.match(refused.ok ? '' : refused.error, /conflicts in shared\.txt and cannot be approved/);

    // Nothing committed on the user's branch; the changes are uncommitted; the branches hold the work.
    assert.equal(userRepoState(dir).head, before.head);
    assert.equal(userRepoState(dir).branches, before.branches);
    assert.match(userGit(dir, ['status', '--porcelain']), / M shared\.txt/);
    assert.equal(userGit(dir, ['show', `legion/${ALICE}:alice.txt`]), 'alice was here\n');
    assert.equal(userGit(dir, ['show', `legion/${BOB}:shared.txt`]), 'one\ntwo by bob\nthree\n');
    assert.deepEqual(eventsOf(h.events, 'approval-resolve').map((e) => e.decision), ['approved', 'approved']);
    await h.close();
  });
});

test('headless --approve all decides merge requests: one merges, the other conflicts', async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const h = await startAppHarness({ dir, agents: AGENTS, script: SCRIPT, headless: { approve: 'all' } });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'lead done');
    const results = toolResults(h.core.history(sent.sessionId)).map((r) => r.content);
    const merged = results.filter((c) => /\[worktree\] merged into the workspace/.test(c));
    const conflicted = results.filter((c) => /\[worktree\] conflict in shared\.txt/.test(c));
    assert.equal(merged.length, 1, JSON.stringify(h.events.filter((e) => e.type === "notice"), null, 1) + results.join('\n---\n'));
    assert.equal(conflicted.length, 1, results.join('\n---\n'));
    assert.match(readFileSync(join(dir, 'shared.txt'), 'utf8'), /two by (alice|bob)/);
    assert.ok(eventsOf(h.events, 'approval-resolve').some((e) => e.decidedBy === 'headless' && e.decision === 'approved'));
    await h.close();
  });
});

test('a workspace that is not a git repository refuses isolation with a clear tool result', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({ dir, agents: AGENTS, script: SCRIPT, headless: { approve: 'all' } });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'lead done');
    const results = toolResults(h.core.history(sent.sessionId));
    assert.equal(results[0]!.isError, true);
    assert.match(results[0]!.content, /^refused: isolation needs a git repository: the workspace is not a git repository/);
    assert.equal(existsSync(join(dir, 'shared.txt')), false);
    await h.close();
  });
});

test("a participant's isolation: worktree applies when the call says nothing; isolation.default in the config too; none in the call wins", async () => {
  const script = `
replies:
  - agent: lead
    on: message
    toolCalls:
      - { name: communicator, input: { targetId: alice, sessionName: a, message: "alice's part" } }
      - { name: communicator, input: { targetId: bob, sessionName: b, message: "bob's part" } }
      - { name: communicator, input: { targetId: bob, sessionName: c, isolation: none, message: "bob's other part" } }
  - { agent: alice, on: message, toolCalls: [{ name: file_write, input: { path: alice.txt, content: "A\\n" } }] }
  - { agent: bob, on: message, when: "other part", toolCalls: [{ name: file_write, input: { path: bob-c.txt, content: "C\\n" } }] }
  - { agent: bob, on: message, toolCalls: [{ name: file_write, input: { path: bob.txt, content: "B\\n" } }] }
  - { agent: alice, on: tool-result, text: "alice finished" }
  - { agent: bob, on: tool-result, text: "bob finished", repeat: true }
  - { agent: lead, on: tool-result, text: "lead done" }
`;
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const agents = [AGENTS[0]!, { ...AGENTS[1]!, isolation: 'worktree' as const }, AGENTS[2]!];
    const h = await startAppHarness({ dir, agents, script, config: { isolation: { default: 'worktree' } }, headless: { approve: 'all' } });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'lead done');
    const merged = h.events.filter((e) => e.type === 'approval-request' && e.toolName === 'merge').map((e) => (e as { sessionId: string }).sessionId).sort();
    assert.deepEqual(merged, [ALICE, BOB], 'alice by her participant file, bob b by the config default; bob c not isolated');
    assert.equal(existsSync(join(dir, '.legion/worktrees/session-lead__bob__c')), false);
    await h.close();
  });
});

test('a caller with approvalAuthority over merge gets the merge request with its diff in its communicator result and decides it', async () => {
  const script = `
replies:
  - { agent: lead, on: message, toolCalls: [{ name: communicator, input: { targetId: alice, sessionName: a, isolation: worktree, message: "alice's part" } }] }
  - { agent: alice, on: message, toolCalls: [{ name: file_write, input: { path: alice.txt, content: "alice was here\\n" } }] }
  - { agent: alice, on: tool-result, text: "alice finished" }
  - agent: lead
    on: tool-result
    when: "its diff"
    toolCalls: [{ name: resolve_approval, input: { requestId: apr-1, decision: approved, reason: "looks right" } }]
  - { agent: lead, on: tool-result, when: "approved apr-1", text: "lead done" }
`;
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const agents = [{ id: 'lead', tools: ['communicator', 'resolve_approval'], approvalAuthority: ['merge'] }, AGENTS[1]!];
    const h = await startAppHarness({ dir, agents, script, headless: { approve: 'deny' } });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'lead done');
    assert.match(JSON.stringify(h.core.history(sent.sessionId)), /\[reply from alice, session session-lead__alice__a\]\\nalice finished\\n\\n\[worktree\] merged into the workspace/);
    const requests = eventsOf(h.events, 'approval-request').filter((e) => e.toolName === 'merge');
    assert.deepEqual(requests.map((r) => r.approverId), ["lead"], JSON.stringify(toolResults(h.core.history(sent.sessionId)), null, 1));
    assert.deepEqual(eventsOf(h.events, 'approval-resolve').map((e) => [e.decision, e.decidedBy]), [['approved', 'agent:lead']]);
    const early = toolResults(h.core.history(sent.sessionId))[0]!.content;
    assert.match(early, /- apr-1: merge .*\(asked by alice; merge alice's work/);
    assert.match(early, /its diff:\n {4}diff --git a\/alice\.txt b\/alice\.txt/);
    assert.equal(readFileSync(join(dir, 'alice.txt'), 'utf8'), 'alice was here\n');
    await h.close();
  });
});
