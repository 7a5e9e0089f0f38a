import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hasTmux, initWorkspace, legionTui, startTmux, withWorkspace } from './modals-support';

const skip = hasTmux() ? false : 'tmux is not installed';

/** The built CLI in a real terminal: a workflow started from the new-session modal (docs/workflows.md#tui). */

const SCRIPT = `
version: 1
replies:
  - { agent: scribe, when: "^notes on", text: "scribe notes done", delayMs: 400, repeat: true }
  - { agent: scout, when: "^facts on", text: "scout facts done", delayMs: 400, repeat: true }
  - { agent: scribe, when: "^merge", text: "MERGED {{lastText}}", repeat: true }
  - { agent: ur-agent, repeat: true, text: "ur-agent heard you." }
`;

const DUO = `description: notes and facts in parallel, then a merge
steps:
  - { id: notes, agent: scribe, prompt: "notes on {{input}}" }
  - { id: facts, agent: scout, prompt: "facts on {{input}}" }
  - { id: merge, agent: scribe, after: [notes, facts], prompt: "merge [{{steps.notes.output}}] [{{steps.facts.output}}]" }
`;

test('Ctrl+N starts a workflow: its steps open lanes, the status bar shows progress, the merge gets both outputs', { skip, timeout: 120_000 }, async () => {
  await withWorkspace(async (dir) => {
    await initWorkspace(dir, [{ id: 'scribe', tools: ['file_read'] }, { id: 'scout', tools: ['file_read'] }]);
    await mkdir(join(dir, '.legion', 'workflows'), { recursive: true, mode: 0o700 });
    await writeFile(join(dir, '.legion', 'workflows', 'duo.yaml'), DUO, { mode: 0o600 });
    const script = join(dir, 'script.yaml');
    await writeFile(script, SCRIPT);
    const { command, env } = legionTui(dir, script);
    const t = startTmux(command, env);
    try {
      await t.waitFor(/message ur-agent/);
      t.keys('C-n');
      await t.waitFor(/duo +workflow · 3 steps/);
      t.type('duo');
      t.keys('Tab');
      await t.waitFor(/Runs duo: notes, facts, merge/);
      t.type('the release');
      t.keys('Enter');
      let s = await t.waitFor(/duo [0-2]\/3 · \$/, 20_000);
      s = await t.waitFor(/user → scout · duo-facts/, 20_000);
      assert.match(s, /user → scribe · duo-notes/);
      s = await t.waitFor(/MERGED merge \[scribe notes done\] \[scout facts done\]/, 30_000);
      assert.match(s, /user → scribe · duo-merge/);
      await t.waitGone(/duo \d\/3 · \$/, 20_000);
      t.keys('C-c');
      t.keys('C-c');
      await t.waitFor(/\[exited 0\]/, 20_000);
    } finally {
      t.kill();
    }
    const [run] = await readdir(join(dir, '.legion', 'runs'));
    const progress = JSON.parse(await readFile(join(dir, '.legion', 'runs', run!, 'workflows', 'duo-1.json'), 'utf8'));
    assert.equal(progress.status, 'done');
    assert.equal(progress.input, 'the release');
  });
});
