import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hasTmux, initWorkspace, legionTui, startTmux, withWorkspace, type Tmux } from './modals-support';

const skip = hasTmux() ? false : 'tmux is not installed';

const SCRIPT = `
version: 1
replies:
  - { agent: scribe, when: "hello scribe", text: "Hi, scribe here: notes are open.", repeat: true }
  - { agent: scout, when: "look around", text: "Scout looked around.", repeat: true }
  - { agent: ur-agent, when: "secret word", text: "The secret word is zanzibar.", repeat: true }
  - { agent: ur-agent, repeat: true, text: "ur-agent heard you." }
`;

async function workspace(dir: string): Promise<{ command: string[]; env: Record<string, string> }> {
  await initWorkspace(dir, [{ id: 'scribe', tools: ['file_read'] }, { id: 'scout', tools: ['file_read'] }]);
  const script = join(dir, 'script.yaml');
  await writeFile(script, SCRIPT);
  return legionTui(dir, script);
}

/** The header line of the focused lane (it carries the focus mark). */
const focusedHeader = (screen: string): string => screen.split('\n').find((l) => /▶ \S+ → \S+ · /.test(l))?.replace(/^.*▶ /, '') ?? '';

// Ctrl+N / Ctrl+P and the history search are scenarios of both modes (tui-scenarios.ts); resuming an
// older run is local only (not offered while attached, docs/serve.md#attaching).
test('Ctrl+O finds a word from an earlier run and resumes that run', { skip, timeout: 120_000 }, async () => {
  await withWorkspace(async (dir) => {
    const { command, env } = await workspace(dir);
    const first = startTmux(command, env);
    try {
      await first.waitFor(/message ur-agent/);
      first.type('what is the secret word?');
      first.keys('Enter');
      await first.waitFor(/The secret word is zanzibar\./, 30_000);
      first.keys('C-c');
      first.keys('C-c');
      await first.waitFor(/\[exited 0\]/, 20_000);
    } finally {
      first.kill();
    }
    const [oldRun] = await readdir(join(dir, '.legion', 'runs'));
    assert.ok(oldRun);

    const second = startTmux([...command, '--new'], env);
    try {
      let s = await second.waitFor(/message ur-agent/);
      assert.doesNotMatch(s, /zanzibar/);
      second.type('hi');
      second.keys('Enter');
      await second.waitFor(/ur-agent heard you\./, 30_000);
      second.keys('C-o');
      s = await second.waitFor(/History · runs[\s\S]*\(current\)/);
      assert.match(s, /what is the secret word\?/);
      // The older run is listed second (newest first): highlight it and search it.
      second.keys('Down');
      second.type('/');
      await second.waitFor(/^\s*│?\s*\/ /m);
      second.type('ZANZIBAR');
      second.keys('Enter');
      s = await second.waitFor(new RegExp(`"ZANZIBAR" in run ${oldRun} · 1 hit`));
      assert.match(s, /user → ur-agent · default +The secret word is zanzibar\./);
      // Enter shows the hit in its transcript; Enter again resumes that run in the app.
      second.keys('Enter');
      // The transcript loads asynchronously ("reading the transcript…"): wait for its text.
      s = await second.waitFor(/(?=[\s\S]*Enter resume run)(?=[\s\S]*what is the secret word\?)/, 20_000);
      second.keys('Enter');
      s = await second.waitFor(new RegExp(`run ${oldRun} \\(resumed\\)`), 30_000);
      await second.waitGone(/History ·/);
      s = await second.waitFor(/The secret word is zanzibar\./);
      assert.match(focusedHeader(s), /user → ur-agent · default/);
      // The resumed run takes messages.
      second.type('again, the secret word');
      second.keys('Enter');
      s = await second.waitFor(/again, the secret word[\s\S]*The secret word is zanzibar\.[\s\S]*$/, 30_000);
    } finally {
      second.kill();
    }
  });
});

test('resuming a run another Legion holds fails cleanly: the run you came from comes back with the reason', { skip, timeout: 120_000 }, async () => {
  await withWorkspace(async (dir) => {
    const { command, env } = await workspace(dir);
    const holder = startTmux(command, env);
    let other: Tmux | null = null;
    try {
      await holder.waitFor(/message ur-agent/);
      holder.type('what is the secret word?');
      holder.keys('Enter');
      await holder.waitFor(/The secret word is zanzibar\./, 30_000);
      const [held] = await readdir(join(dir, '.legion', 'runs'));
      other = startTmux([...command, '--new'], env);
      await other.waitFor(/message ur-agent/);
      other.type('hi');
      other.keys('Enter');
      await other.waitFor(/ur-agent heard you\./, 30_000);
      const current = (await readdir(join(dir, '.legion', 'runs'))).find((r) => r !== held)!;
      other.keys('C-o');
      await other.waitFor(/History · runs[\s\S]*\(current\)/);
      other.keys('Down');
      other.keys('Enter');
      await other.waitFor(/History · run /);
      other.keys('Enter');
      // Enter acts once the transcript has loaded ("reading the transcript…" before).
      await other.waitFor(/(?=[\s\S]*Enter resume run)(?=[\s\S]*what is the secret word\?)/, 20_000);
      other.keys('Enter');
      const s = await other.waitFor(new RegExp(`could not resume run ${held}`), 30_000);
      assert.match(s, new RegExp(`run ${current} \\(resumed\\)`));
      await other.waitFor(/ur-agent heard you\./);
      // The holder was not disturbed.
      assert.match(holder.screen(), /The secret word is zanzibar\./);
      assert.doesNotMatch(holder.screen(), /\[exited/);
    } finally {
      other?.kill();
      holder.kill();
    }
  });
});
