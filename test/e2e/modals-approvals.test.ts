import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { hasTmux, initWorkspace, legionTui, openApprovalQueue, quitTui, startTmux, withWorkspace, type Tmux } from './modals-support';

const skip = hasTmux() ? false : 'tmux is not installed';

/** ur-agent delegates to scribe and scout in parallel; each writes two files (four requests). */
const TWO_AGENTS = `
version: 1
replies:
  - agent: ur-agent
    first: true
    text: "Delegating to scribe and scout."
    toolCalls:
      - name: communicator
        input: { targetId: scribe, sessionName: files, message: "write a1 and a2" }
      - name: communicator
        input: { targetId: scout, sessionName: files, message: "write b1 and b2" }
  - agent: scribe
    first: true
    text: "Writing a1 and a2."
    toolCalls:
      - { name: file_write, input: { path: a1.txt, content: "alpha one\\n" } }
      - { name: file_write, input: { path: a2.txt, content: "alpha two\\n" } }
  - agent: scout
    first: true
    text: "Writing b1 and b2."
    toolCalls:
      - { name: file_write, input: { path: b1.txt, content: "bravo one\\n" } }
      - { name: file_write, input: { path: b2.txt, content: "bravo two\\n" } }
  - { agent: scribe, on: tool-result, repeat: true, text: "scribe finished" }
  - { agent: scribe, on: tool-error, repeat: true, text: "scribe finished with a refusal" }
  - { agent: scout, on: tool-result, repeat: true, text: "scout finished" }
  - { agent: scout, on: tool-error, repeat: true, text: "scout finished with a refusal" }
  - { agent: ur-agent, on: tool-result, repeat: true, text: "All delegates answered." }
`;

async function workspace(dir: string, script: string): Promise<string> {
  await initWorkspace(dir, [{ id: 'scribe', tools: ['file_write', 'file_read'] }, { id: 'scout', tools: ['file_write', 'file_read'] }]);
  const path = join(dir, 'script.yaml');
  await writeFile(path, script);
  return path;
}

async function approvalLines(dir: string): Promise<Record<string, unknown>[]> {
  const runs = join(dir, '.legion', 'runs');
  const out: Record<string, unknown>[] = [];
  for (const run of await readdir(runs)) {
    const file = join(runs, run, 'approvals.jsonl');
    if (!existsSync(file)) continue;
    for (const line of (await readFile(file, 'utf8')).split('\n')) if (line.trim()) out.push(JSON.parse(line) as Record<string, unknown>);
  }
  return out;
}

/** The line of the screen holding the highlighted queue row. */
const highlighted = (screen: string): string => screen.split('\n').find((l) => /▶ \[[ x]\]/.test(l)) ?? '';

test('two agents ask at once: the queue opens by itself; approve one, reject one with a reason, Y the rest; the files match', { skip, timeout: 120_000 }, async () => {
  await withWorkspace(async (dir) => {
    const script = await workspace(dir, TWO_AGENTS);
    const { command, env } = legionTui(dir, script);
    const t = startTmux(command, env);
    try {
      await t.waitFor(/message ur-agent/);
      t.type('go');
      t.keys('Enter');
      // All four requests, grouped by asking agent with the chain.
      let s = await t.waitFor(/Approval queue · 4 waiting for you/, 30_000);
      assert.match(s, /user → ur-agent → scribe {2}\(2\)/);
      assert.match(s, /user → ur-agent → scout {2}\(2\)/);
      assert.match(highlighted(s), /file_write a1\.txt/);
      // Approve the highlighted one (a1).
      t.type('y');
      s = await t.waitFor(/3 waiting for you/);
      assert.match(s, /approved file_write a1\.txt/);
      assert.match(highlighted(s), /file_write a2\.txt/);
      // Reject a2 with a reason typed inline.
      t.type('n');
      await t.waitFor(/Reject 1 request\. Reason \(optional\):/);
      t.type('name it a3 instead');
      t.keys('Enter');
      s = await t.waitFor(/2 waiting for you/);
      assert.match(s, /rejected file_write a2\.txt \(name it a3 instead\)/);
      // Approve the rest (b1, b2) at once: the queue closes.
      t.type('Y');
      await t.waitGone(/Approval queue/);
      await t.waitFor(/All delegates answered\./, 30_000);
      assert.equal(await readFile(join(dir, 'a1.txt'), 'utf8'), 'alpha one\n');
      assert.equal(existsSync(join(dir, 'a2.txt')), false);
      assert.equal(await readFile(join(dir, 'b1.txt'), 'utf8'), 'bravo one\n');
      assert.equal(await readFile(join(dir, 'b2.txt'), 'utf8'), 'bravo two\n');
      // The decisions as persisted: by request id, each once, the reason kept.
      const lines = await approvalLines(dir);
      const requests = lines.filter((l) => l.kind === 'request');
      const decided = lines.filter((l) => l.kind === 'resolve');
      assert.equal(requests.length, 4, JSON.stringify(lines));
      assert.equal(decided.length, 4, JSON.stringify(lines));
      assert.equal(new Set(decided.map((d) => d.requestId)).size, 4);
      const byPath = new Map(requests.map((r) => [(r.input as { path: string }).path, r.requestId]));
      const decisionOf = (path: string): Record<string, unknown> | undefined => decided.find((d) => d.requestId === byPath.get(path));
      assert.ok(decided.every((d) => d.decidedBy === 'user'));
      assert.equal(decisionOf('a1.txt')?.decision, 'approved');
      assert.equal(decisionOf('a2.txt')?.decision, 'rejected');
      assert.match(String(decisionOf('a2.txt')?.reason), /name it a3 instead/);
      assert.equal(decisionOf('b1.txt')?.decision, 'approved');
      assert.equal(decisionOf('b2.txt')?.decision, 'approved');
    } finally {
      t.kill();
    }
  });
});

/** scribe writes r1 on the first request; after a restart, "again" makes it write r2. */
const RESTART = `
version: 1
replies:
  - agent: ur-agent
    when: "again"
    text: "Asking scribe again."
    toolCalls:
      - { name: communicator, input: { targetId: scribe, sessionName: second, message: "write r2" } }
  - agent: ur-agent
    first: true
    text: "Asking scribe."
    toolCalls:
      - { name: communicator, input: { targetId: scribe, sessionName: first, message: "write r1" } }
  - agent: scribe
    when: "write r1"
    toolCalls:
      - { name: file_write, input: { path: r1.txt, content: "one\\n" } }
  - agent: scribe
    when: "write r2"
    toolCalls:
      - { name: file_write, input: { path: r2.txt, content: "two\\n" } }
  - { agent: scribe, on: tool-result, repeat: true, text: "scribe done" }
  - { agent: scribe, on: tool-error, repeat: true, text: "scribe refused" }
  - { agent: ur-agent, on: tool-result, repeat: true, text: "ur-agent done" }
  - { agent: ur-agent, on: tool-error, repeat: true, text: "ur-agent saw an error" }
`;


test('an approval pending at quit (ur-agent → scribe) is in the queue after a restart: approving it writes r1 and both turns finish; new ones go by their own ids', { skip, timeout: 120_000 }, async () => {
  await withWorkspace(async (dir) => {
    const script = await workspace(dir, RESTART);
    const { command, env } = legionTui(dir, script);
    const first = startTmux(command, env);
    try {
      await first.waitFor(/message ur-agent/);
      first.type('go');
      first.keys('Enter');
      await first.waitFor(/Approval queue · 1 waiting for you/, 30_000);
      assert.match(first.screen(), /file_write r1\.txt/);
      first.keys('Escape');
      await first.waitGone(/Approval queue/);
      await quitTui(first);
    } finally {
      first.kill();
    }
    assert.equal(existsSync(join(dir, 'r1.txt')), false);

    let second: Tmux | undefined;
    for (let attempt = 0; !second; attempt++) {
      try {
        second = startTmux(command, env);
      } catch (error) {
        // A tmux server whose last session just ended may refuse the next one: retry.
        if (attempt >= 5) throw error;
        await new Promise((r) => setTimeout(r, 300));
      }
    }
    try {
      // The request from before the restart waits again (the chain user → ur-agent → scribe resumed).
      await second.waitFor(/1 approval pending/);
      let s = await openApprovalQueue(second, /Approval queue · 1 waiting for you/);
      assert.match(s, /file_write r1\.txt/);
      second.type('y');
      await second.waitGone(/Approval queue/);
      await second.waitFor(/ur-agent done/, 30_000);
      assert.equal(await readFile(join(dir, 'r1.txt'), 'utf8'), 'one\n');
      // A new request goes by its own id: approving it writes r2.
      second.type('again');
      second.keys('Enter');
      s = await second.waitFor(/Approval queue · 1 waiting for you/, 30_000);
      assert.match(s, /file_write r2\.txt/);
      second.type('Y');
      await second.waitGone(/Approval queue/);
      for (let i = 0; i < 100 && !existsSync(join(dir, 'r2.txt')); i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(await readFile(join(dir, 'r2.txt'), 'utf8'), 'two\n');
      const lines = await approvalLines(dir);
      // Each request decided once, by the user, under its own id.
      const requestOf = (path: string) => lines.find((l) => l.kind === 'request' && (l.input as { path: string }).path === path)!.requestId;
      const resolves = lines.filter((l) => l.kind === 'resolve');
      assert.notEqual(requestOf('r1.txt'), requestOf('r2.txt'));
      assert.deepEqual(resolves.filter((l) => l.requestId === requestOf('r1.txt')).map((l) => [l.decision, l.decidedBy]), [['approved', 'user']]);
      assert.deepEqual(resolves.filter((l) => l.requestId === requestOf('r2.txt')).map((l) => [l.decision, l.decidedBy]), [['approved', 'user']]);
      await quitTui(second);
    } finally {
      second.kill();
    }
  });
});
