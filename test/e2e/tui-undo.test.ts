import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { makeTempDir } from '../helpers/tmp';
import { bundlePath as BUNDLE, cleanAppEnv, ensureBundle } from '../helpers/bundle';
import { hasTmux, shellCommand, startTmux } from '../helpers/tmux';
import { trustWorkspace } from '../helpers/trust';

const SCRIPT = resolve(process.cwd(), 'test', 'fixtures', 'faux', 'undo-e2e.yaml');

test('tmux: an agent writes a file; Ctrl+R on its lane lists the checkpoint, Enter shows the diff, y restores and the agent is told', { skip: !hasTmux() && 'tmux is not installed', timeout: 120_000 }, async () => {
  ensureBundle({ e2e: true, rebuild: 'always' });
  const ws = await makeTempDir('legion-undo-e2e-');
  await mkdir(join(ws.dir, '.legion', 'collective', 'participants'), { recursive: true });
  await writeFile(join(ws.dir, '.legion', 'collective', 'participants', 'writer.json'), JSON.stringify({
    version: 1, id: 'writer', kind: 'agent', name: 'Writer', description: 'writes', systemPrompt: 'You write files.', tools: ['file_write'],
  }));
  await writeFile(join(ws.dir, '.legion', 'rules.yaml'), 'version: 1\nrules:\n  - { id: e2e-writes, decision: allow, tool: file_write, reason: the e2e writer may write }\n');
  const command = shellCommand([process.execPath, BUNDLE, '--cwd', ws.dir]);
  const env = cleanAppEnv({ LEGION_FAUX_SCRIPT: SCRIPT });
  await trustWorkspace(ws.dir, env); // the test wrote this .legion/ (docs/workspace-trust.md)
  const tmux = startTmux({ command, cwd: ws.dir, env, width: 140, height: 40 });
  try {
    await tmux.waitFor(/▶ user → ur-agent · default/, 15_000, 'the first frame');
    tmux.type('go');
    tmux.keys('Enter');
    await tmux.waitFor(/writer says wrote note\.txt/, 20_000, "ur-agent's answer");
    assert.ok(existsSync(join(ws.dir, 'note.txt')));
    tmux.keys('Tab');
    await tmux.waitFor(/▶ ur-agent → writer · docs/, 5_000, 'focus on the writer lane');
    tmux.keys('C-r');
    let screen = await tmux.waitFor(/writer · turn 1 · file_write/, 15_000, 'the checkpoint list');
    assert.match(screen, /Checkpoints · ur-agent__writer__docs/);
    assert.match(screen, /A note\.txt/);
    tmux.keys('Enter');
    screen = await tmux.waitFor(/undo to before ck-[\s\S]*-written by writer/, 15_000, 'the undo preview with its diff');
    assert.match(screen, /remove +note\.txt +\(writer turn 1\)/);
    assert.match(screen, /-written by writer/);
    tmux.type('y');
    await tmux.waitFor(/restored 1 file\(s\); told writer/, 15_000, 'the restore');
    assert.equal(existsSync(join(ws.dir, 'note.txt')), false);
    tmux.keys('Escape');
    await tmux.waitFor(/\[legion\] the user restored files/, 10_000, 'the note in the writer lane');
    tmux.keys('C-c');
    tmux.keys('C-c');
    await tmux.waitFor(() => tmux.dead(), 10_000, 'the app to exit');
  } finally {
    tmux.kill();
    await ws.cleanup();
  }
});
