import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { startAppHarness } from '../../helpers/app-harness';
import { runCli } from '../../helpers/cli';
import { eventsOf, toolResults } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';
import { makeRepo, userGit } from '../../unit/worktrees/helpers';

/**
 * Checkpoints inside a worktree (docs/worktrees.md#checkpoints-and-undo): an isolated session's
 * batches are checkpointed in a store rooted at its worktree (kept beside it, not in it), and
 * undo restores the worktree's files while the workspace stays as it is.
 */
const AGENTS = [
  { id: 'lead', tools: ['communicator'] },
  { id: 'alice', tools: ['file_write', 'file_delete'] },
];
const SCRIPT = `
replies:
  - { agent: lead, on: message, toolCalls: [{ name: communicator, input: { targetId: alice, sessionName: a, isolation: worktree, message: "alice's part" } }] }
  - agent: alice
    on: message
    toolCalls:
      - { name: file_write, input: { path: shared.txt, content: "one\\ntwo by alice\\nthree\\n" } }
      - { name: file_write, input: { path: alice.txt, content: "alice was here\\n" } }
      - { name: file_delete, input: { path: README.md } }
  - { agent: alice, on: tool-result, text: "alice finished" }
  - { agent: lead, on: tool-result, text: "lead done" }
`;
const ALICE = 'session-lead__alice__a';
const ORIGINAL = 'one\ntwo\nthree\n';

function worktreeBatch(h: { events: readonly unknown[] }): { checkpointId: string; files: string[] } {
  const done = eventsOf(h.events as never, 'checkpoint').filter((e) => e.sessionId === ALICE && e.files !== undefined && !e.toolUseIds[0]!.startsWith('merge-'));
  assert.equal(done.length, 1, 'one checkpoint for the batch in the worktree');
  return { checkpointId: done[0]!.checkpointId, files: [...done[0]!.files!].sort() };
}

test("an isolated session's batch is checkpointed in its worktree; undo restores the worktree and leaves the workspace alone", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const h = await startAppHarness({ dir, agents: AGENTS, script: SCRIPT });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    await h.waitFor((e) => e.type === 'approval-request' && e.toolName === 'merge' && e.sessionId === ALICE, 30_000);
    const tree = join(dir, '.legion/worktrees', ALICE);
    assert.equal(readFileSync(join(tree, 'shared.txt'), 'utf8'), 'one\ntwo by alice\nthree\n');

    // The batch was checkpointed, in a store beside the worktree: not in the workspace's, not in the worktree.
    const batch = worktreeBatch(h);
    assert.deepEqual(batch.files, ['README.md', 'alice.txt', 'shared.txt']);
    const records = readFileSync(join(dir, '.legion/worktrees', `${ALICE}.checkpoints`, 'checkpoints.jsonl'), 'utf8');
    assert.match(records, new RegExp(batch.checkpointId));
    const inWorkspace = join(dir, '.legion/checkpoints/checkpoints.jsonl');
    assert.ok(!existsSync(inWorkspace) || !readFileSync(inWorkspace, 'utf8').includes(batch.checkpointId));
    assert.equal(existsSync(join(tree, '.legion')), false, 'nothing of the checkpoints inside the worktree (the agent writes there)');

    // Reject the merge: the work stays in the worktree; the session is idle again.
    const request = h.core.pendingApprovals().find((p) => p.sessionId === ALICE)!;
    assert.deepEqual(h.core.resolveApprovals([request.requestId], 'rejected', { reason: 'not now' }), { ok: true });
    assert.equal(await h.core.idle(sent.sessionId), 'lead done');
    const status = userGit(dir, ['status', '--porcelain']);

    // Undo of the session (the lane's `u`, `legion undo --session`): its latest checkpoint is the worktree batch.
    const undo = h.undo!;
    assert.deepEqual((await undo.list(ALICE)).map((c) => c.id), [batch.checkpointId]);
    const shown = await undo.preview({ sessionId: ALICE });
    assert.ok(shown.ok, shown.ok ? '' : shown.error);
    assert.equal(shown.preview.plan.target.id, batch.checkpointId);
    assert.deepEqual(shown.preview.plan.restore.map((f) => f.path).sort(), ['README.md', 'alice.txt', 'shared.txt']);
    assert.match(shown.preview.diff, /-two by alice/);
    const restored = await undo.restore(shown.preview.plan, { includeConflicts: false });
    assert.ok(restored.ok, restored.ok ? '' : restored.error);

    assert.equal(readFileSync(join(tree, 'shared.txt'), 'utf8'), ORIGINAL);
    assert.equal(readFileSync(join(tree, 'README.md'), 'utf8'), '# demo\n');
    assert.equal(existsSync(join(tree, 'alice.txt')), false);
    // The workspace did not move.
    assert.equal(readFileSync(join(dir, 'shared.txt'), 'utf8'), ORIGINAL);
    assert.equal(existsSync(join(dir, 'alice.txt')), false);
    assert.equal(userGit(dir, ['status', '--porcelain']), status);
    // The agent is told in its session.
    assert.match(JSON.stringify(h.core.history(ALICE)), /the user restored files .*shared\.txt.* to before your turn 1/);
    await h.close();
  });
});

test('legion undo --session after a merge: the merge (workspace) first, then --to the worktree batch, which restores the worktree only', async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const h = await startAppHarness({ dir, agents: AGENTS, script: SCRIPT, headless: { approve: 'all' } });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'lead done');
    const batch = worktreeBatch(h);
    await h.waitFor((e) => e.type === 'checkpoint' && e.sessionId === ALICE && e.files !== undefined && e.toolUseIds[0]!.startsWith('merge-'), 30_000);
    await h.close();
    assert.equal(readFileSync(join(dir, 'alice.txt'), 'utf8'), 'alice was here\n');
    const tree = join(dir, '.legion/worktrees', ALICE);
    const cli = (args: string[]) => runCli(['undo', ...args], { cwd: dir, env: { HOME: dir } });

    const listed = await cli(['--session', ALICE, '--list']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(batch.checkpointId), 'the worktree batch is listed with the session');

    // The newest of the session is the merge: undoing it restores the workspace.
    const merge = await cli(['--session', ALICE, '--yes']);
    assert.equal(merge.code, 0, merge.stderr);
    assert.equal(existsSync(join(dir, 'alice.txt')), false);
    assert.equal(readFileSync(join(dir, 'shared.txt'), 'utf8'), ORIGINAL);
    assert.equal(readFileSync(join(tree, 'alice.txt'), 'utf8'), 'alice was here\n', 'undoing the merge leaves the worktree');

    // The worktree batch, by id: restores the worktree, not the workspace.
    const status = userGit(dir, ['status', '--porcelain']);
    const inTree = await cli(['--to', batch.checkpointId, '--yes']);
    assert.equal(inTree.code, 0, inTree.stderr);
    assert.match(inTree.stdout, /restored 3 file\(s\)/);
    assert.equal(existsSync(join(tree, 'alice.txt')), false);
    assert.equal(readFileSync(join(tree, 'shared.txt'), 'utf8'), ORIGINAL);
    assert.equal(userGit(dir, ['status', '--porcelain']), status);
  });
});

test("the isolated agent cannot reach its checkpoints: they are beside its worktree, outside the root its file tools are confined to", async () => {
  await withTempDir(async (raw) => {
    await makeRepo(raw);
    const dir = realpathSync(raw);
    const records = join(dir, '.legion/worktrees', `${ALICE}.checkpoints`, 'checkpoints.jsonl');
    const script = `
replies:
  - { agent: lead, on: message, toolCalls: [{ name: communicator, input: { targetId: alice, sessionName: a, isolation: worktree, message: "alice's part" } }] }
  - { agent: alice, on: message, toolCalls: [{ name: file_write, input: { path: alice.txt, content: "first\\n" } }] }
  - agent: alice
    on: tool-result
    toolCalls:
      - { name: file_write, input: { path: "${records}", content: "forged\\n" } }
      - { name: file_write, input: { path: "../${ALICE}.checkpoints/checkpoints.jsonl", content: "forged\\n" } }
  - { agent: alice, on: tool-result, text: "alice finished" }
  - { agent: alice, on: tool-error, text: "alice finished" }
  - { agent: lead, on: tool-result, text: "lead done" }
`;
    const h = await startAppHarness({ dir, agents: AGENTS, script, headless: { approve: 'deny' } });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    assert.equal(await h.core.idle(sent.sessionId), 'lead done');
    const refused = toolResults(h.core.history(ALICE)).slice(1);
    assert.equal(refused.length, 2, JSON.stringify(refused));
    for (const result of refused) assert.match(result.content, /^denied: path: .* is outside the workspace/, JSON.stringify(result));
    const text = readFileSync(records, 'utf8');
    assert.doesNotMatch(text, /forged/);
    assert.match(text, /"kind":"after"/, 'the first batch was checkpointed');
    await h.close();
  });
});
