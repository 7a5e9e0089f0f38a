import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR, startAppHarness } from '../../helpers/app-harness';
import type { LegionEvent } from '../../../src/events/types';

/**
 * Every message goes through `journal.append`, which scrubs the secret values Legion knows (the
 * provider keys of its environment): a key that an agent writes into a tool call, reads back in a
 * result, says in its streamed answer, or that comes back in an undo's note (a file it named after
 * the key) is `[REDACTED]` in every event and in every file under `.legion/` — on each path a
 * message takes: the stream step (text-delta, the assistant message), the pre-scan
 * (tool-call-start), the execute phase (tool-call-end, the results message), an undo's note in a
 * running Legion (the undo service's delivery) and from `legion undo` (no Legion running).
 */
const SECRET = 'sk-ant-api03-every-path-0123456789abcdefghijklmnop';
const FILE = `${SECRET}.txt`;

const SCRIPT = `
version: 1
replies:
  - { agent: ur-agent, on: message, toolCalls: [{ name: communicator, input: { targetId: writer, message: "write it" } }] }
  - { agent: ur-agent, on: tool-result, text: "done: {{lastText}}" }
  - agent: writer
    on: message
    toolCalls:
      - { name: file_write, input: { path: "${FILE}", content: "key=${SECRET}\\n" } }
      - { name: file_read, input: { path: "${FILE}" } }
  - { agent: writer, on: tool-result, text: "the key is ${SECRET}" }
  - { agent: writer, on: tool-error, text: "failed: {{lastText}}" }
`;

const WRITER = {
  version: 1, id: 'writer', kind: 'agent', name: 'Writer', description: 'writes', systemPrompt: 'You write files.', tools: ['file_write', 'file_read'],
};

async function workspace(dir: string): Promise<Record<string, string>> {
  await writeFile(join(dir, 'script.yaml'), SCRIPT);
  await mkdir(join(dir, '.legion', 'collective', 'participants'), { recursive: true });
  await writeFile(join(dir, '.legion', 'collective', 'participants', 'writer.json'), JSON.stringify(WRITER));
  return { HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml'), ANTHROPIC_API_KEY: SECRET };
}

/** Every file under `.legion/runs/` that holds the key, with the line that does. */
async function leaksOnDisk(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else for (const line of (await readFile(path, 'utf8')).split('\n')) if (line.includes(SECRET)) out.push(`${path}: ${line.slice(0, 200)}`);
    }
  };
  await walk(join(dir, '.legion', 'runs'));
  return out;
}

function assertScrubbed(events: readonly LegionEvent[], type: LegionEvent['type']): void {
  const ofType = events.filter((e) => e.type === type);
  assert.ok(ofType.length > 0, `some ${type} event`);
  assert.ok(ofType.some((e) => JSON.stringify(e).includes('[REDACTED]')), `a ${type} event carried the key, redacted`);
  for (const event of ofType) assert.ok(!JSON.stringify(event).includes(SECRET), `${type} leaks the key: ${JSON.stringify(event).slice(0, 300)}`);
}

test('legion run and legion undo: the key is redacted in every event and on disk, whichever path its message took', { timeout: 120_000 }, () =>
  withTempDir(async (dir) => {
    const env = await workspace(dir);
    const cli = (argv: string[]) => runCli(argv, { cwd: dir, env, appDir: APP_DIR });
    const ran = await cli(['run', '--json', '--approve', 'all', 'write the key']);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(await readFile(join(dir, FILE), 'utf8'), `key=${SECRET}\n`, 'the call itself ran with the real input');
    const events = ran.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as LegionEvent);
    for (const type of ['text-delta', 'tool-call-start', 'tool-call-end', 'message-add'] as const) assertScrubbed(events, type);
    assert.ok(!ran.stdout.includes(SECRET));
    assert.deepEqual(await leaksOnDisk(dir), []);

    // `legion undo` (no Legion running) tells the writer which files it restored: the file's name is the key.
    const undone = await cli(['undo', '--yes']);
    assert.equal(undone.code, 0, undone.stderr);
    assert.match(undone.stdout, /told writer in session-ur-agent__writer__default/);
    const runId = events.find((e) => e.type === 'checkpoint')!.runId;
    const history = await readFile(join(dir, '.legion', 'runs', runId, 'sessions', 'session-ur-agent__writer__default.jsonl'), 'utf8');
    assert.match(history, /the user restored files .*\[REDACTED\]\.txt/);
    assert.deepEqual(await leaksOnDisk(dir), []);
  }));

test('an undo in a running Legion: its note reaches the session through the journal, redacted', { timeout: 120_000 }, () =>
  withTempDir(async (dir) => {
    const h = await startAppHarness({ dir, script: SCRIPT, agents: [{ id: 'writer', tools: ['file_write', 'file_read'] }], env: { ANTHROPIC_API_KEY: SECRET } });
    try {
      const sent = h.core.send('ur-agent', 'write the key');
      assert.ok(sent.ok);
      await h.core.idle(sent.sessionId);
      assert.ok(h.undo, 'checkpoints are on');
      const shown = await h.undo.preview({ sessionId: 'session-ur-agent__writer__default' });
      assert.ok(shown.ok, shown.ok ? '' : shown.error);
      const restored = await h.undo.restore(shown.preview.plan, { includeConflicts: false });
      assert.ok(restored.ok, restored.ok ? '' : restored.error);
      const notes = h.events.filter((e) => e.type === 'message-add' && e.sessionId === 'session-ur-agent__writer__default' && JSON.stringify(e).includes('restored files'));
      assert.equal(notes.length, 1, 'the note was delivered as a message');
      assertScrubbed(h.events, 'message-add');
    } finally {
      await h.close();
    }
    assert.deepEqual(await leaksOnDisk(dir), []);
  }));
