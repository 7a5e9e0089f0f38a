import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { approvalLines, hasTmux, initWorkspace, legionTui, openApprovalQueue, quitTui, startTmux, withWorkspace, type Tmux } from './modals-support';

const skip = hasTmux() ? false : 'tmux is not installed';

async function workspace(dir: string, script: string): Promise<string> {
  await initWorkspace(dir, [{ id: 'scribe', tools: ['file_write', 'file_read'] }, { id: 'scout', tools: ['file_write', 'file_read'] }]);
  const path = join(dir, 'script.yaml');
  await writeFile(path, script);
  return path;
}


// The first-run approval flow (two agents ask at once) is a scenario of both modes: tui-scenarios.ts.

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
