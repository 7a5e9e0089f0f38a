import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLI, grantTools, hasTmux, initWorkspace, legionTui, openApprovalQueue, quitTui, ROOT, startTmux, withWorkspace, type Tmux } from './modals-support';

const skip = hasTmux() ? false : 'tmux is not installed';

/** ur-agent (given file_write for this test) writes r1 itself: the request is the user lane's own. */
const SCRIPT = `
version: 1
replies:
  - agent: ur-agent
    first: true
    text: "Writing r1."
    toolCalls:
      - { name: file_write, input: { path: r1.txt, content: "one\\n" } }
  - { agent: ur-agent, on: tool-error, repeat: true, text: "ur-agent saw an error" }
  - { agent: ur-agent, on: tool-result, repeat: true, text: "ur-agent wrote r1" }
`;

function ensureBundle(): void {
  if (existsSync(CLI) && process.env.LEGION_TEST === '1') return; // scripts/test.mjs just built it
  const r = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

/** A tmux server whose last session just ended may refuse the next one ("server exited unexpectedly"): retry. */
async function startAgain(command: string[], env: Record<string, string>): Promise<Tmux> {
  for (let attempt = 0; ; attempt++) {
    try {
      return startTmux(command, env);
    } catch (error) {
      if (attempt >= 5) throw error;
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}


test('TUI: a request of the user lane pending at quit is in the queue after a restart (Ctrl+Y); y approves it and the turn goes on', { skip, timeout: 120_000 }, async () => {
  ensureBundle();
  await withWorkspace(async (dir) => {
    await initWorkspace(dir, []);
    await grantTools(dir, 'ur-agent', ['file_write']);
    const script = join(dir, 'script.yaml');
    await writeFile(script, SCRIPT);
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

    const second = await startAgain(command, env);
    try {
      await second.waitFor(/message ur-agent/);
      const s = await openApprovalQueue(second, /Approval queue · 1 waiting for you/);
      assert.match(s, /file_write r1\.txt/);
      second.type('y');
      await second.waitGone(/Approval queue/);
      await second.waitFor(/ur-agent wrote r1/, 30_000);
      assert.equal(await readFile(join(dir, 'r1.txt'), 'utf8'), 'one\n');
      await quitTui(second);
    } finally {
      second.kill();
    }
  });
});
