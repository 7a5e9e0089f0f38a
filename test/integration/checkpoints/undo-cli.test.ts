import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile, readFile, stat, access } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR } from '../../helpers/app-harness';
import type { LegionEvent } from '../../../src/events/types';

/**
 * Checkpoints end to end: `legion run` (faux provider) lets an agent create, edit, delete files and
 * run a shell command; `legion undo` shows and restores, tells the agent, and can be undone itself.
 */
const SCRIPT = `
version: 1
replies:
  - { agent: ur-agent, on: message, when: "^change", toolCalls: [{ name: communicator, input: { targetId: writer, message: "change the files" } }] }
  - { agent: ur-agent, on: tool-result, text: "done: {{lastText}}" }
  - agent: writer
    on: message
    toolCalls:
      - { name: file_write, input: { path: notes/new.md, content: "# created\\n" } }
      - { name: file_edit, input: { path: edit.txt, oldString: "before", newString: "after" } }
      - { name: file_delete, input: { path: gone.txt } }
      - { name: shell, input: { command: "chmod +x tool.sh && printf 'by shell' > shell-made.txt && rm shell-gone.txt" } }
  - { agent: writer, on: tool-result, text: "written" }
  - { agent: writer, on: tool-error, text: "failed: {{lastText}}" }
`;

async function workspace(dir: string): Promise<Record<string, string>> {
  await writeFile(join(dir, 'script.yaml'), SCRIPT);
  await mkdir(join(dir, '.legion', 'collective', 'participants'), { recursive: true });
  await writeFile(join(dir, '.legion', 'collective', 'participants', 'writer.json'), JSON.stringify({
    version: 1, id: 'writer', kind: 'agent', name: 'Writer', description: 'writes', systemPrompt: 'You write files.',
    tools: ['file_write', 'file_edit', 'file_delete', 'shell'],
  }));
  await writeFile(join(dir, 'edit.txt'), 'before\n');
  await writeFile(join(dir, 'gone.txt'), 'delete me\n');
  await writeFile(join(dir, 'tool.sh'), 'echo hi\n', { mode: 0o644 });
  await writeFile(join(dir, 'shell-gone.txt'), 'removed by shell\n');
  return { HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
}

const exists = (p: string) => access(p).then(() => true, () => false);

test('legion undo restores what an agent\'s batch changed (tools and shell), tells it, and can itself be undone', { timeout: 120_000 }, () =>
  withTempDir(async (dir) => {
    const env = await workspace(dir);
    const cli = (argv: string[]) => runCli(argv, { cwd: dir, env, appDir: APP_DIR });
    const ran = await cli(['run', '--json', '--approve', 'all', 'change things']);
    assert.equal(ran.code, 0, ran.stderr);
    const events = ran.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as LegionEvent);
    const checkpoints = events.filter((e): e is Extract<LegionEvent, { type: 'checkpoint' }> => e.type === 'checkpoint');
    assert.equal(checkpoints.length, 2, 'one before the batch, one after it');
    assert.equal(checkpoints[0]!.sessionId, 'session-ur-agent__writer__default');
    assert.equal(checkpoints[0]!.participantId, 'writer');
    assert.equal(checkpoints[0]!.toolUseIds.length, 4);
    assert.deepEqual([...checkpoints[1]!.files!].sort(), ['edit.txt', 'gone.txt', 'notes/new.md', 'shell-gone.txt', 'shell-made.txt', 'tool.sh']);
    assert.equal((await stat(join(dir, 'tool.sh'))).mode & 0o111, 0o111);

    const listed = await cli(['undo', '--list']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`${checkpoints[0]!.checkpointId} .*ur-agent__writer__default +writer · turn 1 · file_write, file_edit, file_delete, shell`));

    const preview = await cli(['undo']);
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, /-after\n\+before/);
    assert.match(preview.stdout, /run again with --yes/);
    assert.equal(await readFile(join(dir, 'edit.txt'), 'utf8'), 'after\n', 'a preview changes nothing');

    const undone = await cli(['undo', '--yes']);
    assert.equal(undone.code, 0, undone.stderr);
    assert.match(undone.stdout, /restored 6 file\(s\)/);
    assert.match(undone.stdout, /told writer in session-ur-agent__writer__default/);
    assert.equal(await readFile(join(dir, 'edit.txt'), 'utf8'), 'before\n');
    assert.equal(await readFile(join(dir, 'gone.txt'), 'utf8'), 'delete me\n');
    assert.equal(await readFile(join(dir, 'shell-gone.txt'), 'utf8'), 'removed by shell\n');
    assert.equal((await stat(join(dir, 'tool.sh'))).mode & 0o111, 0);
    assert.equal(await exists(join(dir, 'notes')), false, 'the created file and its new directory are gone');
    assert.equal(await exists(join(dir, 'shell-made.txt')), false);

    const runId = checkpoints[0]!.runId;
    const history = await readFile(join(dir, '.legion', 'runs', runId, 'sessions', 'session-ur-agent__writer__default.jsonl'), 'utf8');
    assert.match(history, /the user restored files .*edit\.txt.* to before your turn 1/);

    // Undo the undo: the agent's work comes back.
    const redo = await cli(['undo', '--yes']);
    assert.equal(redo.code, 0, redo.stderr);
    assert.equal(await readFile(join(dir, 'edit.txt'), 'utf8'), 'after\n');
    assert.equal(await readFile(join(dir, 'notes/new.md'), 'utf8'), '# created\n');
    assert.equal(await exists(join(dir, 'gone.txt')), false);
  }));

test('legion undo: bad input is one clear line; an empty workspace has nothing to undo', () =>
  withTempDir(async (dir) => {
    const env = await workspace(dir);
    const cli = (argv: string[]) => runCli(argv, { cwd: dir, env, appDir: APP_DIR });
    const bad = await cli(['undo', '--to', '../../etc']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /is not a checkpoint id/);
    const none = await cli(['undo']);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no checkpoints yet/);
    const unknown = await cli(['undo', '--to', 'ck-zzzz-0000']);
    assert.match(unknown.stderr, /no checkpoint ck-zzzz-0000/);
  }));
