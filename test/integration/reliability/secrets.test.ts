import '../../helpers/own-home';
import { test } from 'node:test';
import { testUserDir } from '../../helpers/trust';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createParticipantStore } from '../../../src/collective/store';
import { agentSchema } from '../../../src/collective/participant';
import { initWorkspace } from '../../../src/collective/init';
import { layoutFor } from '../../../src/storage/layout';
import { runCli, type CliRun } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { bundlePath as BUNDLE, ensureBundle } from '../../helpers/bundle';
import { APP_DIR, listFiles } from '../../helpers/crash-workspace';
import { startStrictApiServer, type StrictApiServer } from '../../helpers/strict-api-server';
import { anthropicStream } from '../../helpers/vendor-streams';

/**
 * Secrets (issue 9): the API key of the environment never reaches `.legion/` (sessions,
 * ledger, approvals, allowances, audit, participants, todos, run.json), the `--json` output
 * or stderr — not even when the user types it, the model streams it split across chunks,
 * sends it as a tool input (file_write content, shell command, a todo, its own participant
 * description) or a tool prints it. Tools
 * still run with the real input: the file the model was asked to write holds the real key.
 * Checked through `main()` and through the built bundle `dist/legion.js`.
 */

/**
 * The model's side of the conversation: it echoes the key in streamed text (split mid-key),
 * writes it into a file, runs a shell command holding it (whose output holds it too), puts it
 * in a todo and in its own description, then answers with the key split across three deltas.
 */
function modelFor(key: string): (body: any) => string {
  const cut = 9;
  return (body) => {
    const last = body.messages.at(-1);
    const results: string[] = Array.isArray(last.content) ? last.content.filter((b: any) => b.type === 'tool_result').map((b: any) => b.tool_use_id) : [];
    if (results.includes('toolu_write')) {
      return anthropicStream({ text: ['Saved. Checking it: '], tool: { id: 'toolu_shell', name: 'shell', json: [JSON.stringify({ command: `echo ${key}` })] } });
    }
    if (results.includes('toolu_shell')) {
      return anthropicStream({ text: ['Noting it.'], tool: { id: 'toolu_todo', name: 'todo_write', json: [JSON.stringify({ todos: [{ id: 'k', content: `rotate ${key}`, status: 'pending' }] })] } });
    }
    if (results.includes('toolu_todo')) {
      return anthropicStream({ text: ['Remembering it.'], tool: { id: 'toolu_modify', name: 'modify_agent', json: [JSON.stringify({ id: 'keeper', description: `keeps ${key}` })] } });
    }
    if (results.includes('toolu_modify')) {
      return anthropicStream({ text: ['All set, the key ', key.slice(0, cut), key.slice(cut, cut + 7), key.slice(cut + 7), ' is in config/key.txt.'] });
    }
    return anthropicStream({
      text: ['I will store ', key.slice(0, 4), key.slice(4), ' for you.'],
      tool: { id: 'toolu_write', name: 'file_write', json: [JSON.stringify({ path: 'config/key.txt', content: `ANTHROPIC_API_KEY=${key}\n` })] },
    });
  };
}

async function workspace(dir: string): Promise<void> {
  await initWorkspace({ appDir: APP_DIR, workspaceRoot: dir, userDir: testUserDir(dir) });
  await createParticipantStore(layoutFor(dir)).save(agentSchema().parse({
    id: 'keeper', kind: 'agent', name: 'Keeper', systemPrompt: 'You keep things.', tools: ['file_write', 'shell', 'todo_write', 'modify_agent'],
  }));
}

/** Every place the key (or its random part alone) shows up. */
async function leaks(dir: string, key: string, outputs: Record<string, string>): Promise<string[]> {
  const random = key.slice('sk-ant-test-'.length);
  const found: string[] = [];
  for (const f of await listFiles(join(dir, '.legion'))) {
    const text = await readFile(join(dir, '.legion', f), 'utf8');
    if (text.includes(random)) found.push(`.legion/${f}`);
  }
  for (const [name, text] of Object.entries(outputs)) if (text.includes(random)) found.push(name);
  return found;
}

/** The text-delta texts of a --json stream, joined per session: a key split across deltas shows here. */
function streamedText(jsonOut: string): string {
  return jsonOut.trim().split('\n').map((l) => JSON.parse(l)).filter((e) => e.type === 'text-delta').map((e) => e.text).join('');
}

async function check(dir: string, key: string, runs: Record<string, CliRun>, server: StrictApiServer): Promise<number> {
  for (const [name, r] of Object.entries(runs)) assert.equal(r.code, 0, `${name}: ${r.stderr}`);
  const outputs: Record<string, string> = {};
  for (const [name, r] of Object.entries(runs)) {
    outputs[`${name} stdout`] = r.stdout;
    outputs[`${name} stderr`] = r.stderr;
    if (name.includes('json')) outputs[`${name} streamed text`] = streamedText(r.stdout);
  }
  assert.deepEqual(await leaks(dir, key, outputs), [], 'the key appears nowhere Legion writes');
  // The tools ran with the real input: the file the model wrote holds the real key.
  assert.equal(await readFile(join(dir, 'config', 'key.txt'), 'utf8'), `ANTHROPIC_API_KEY=${key}\n`);
  assert.deepEqual(server.rejected().map((r) => r.rejected), []);
  // The redaction is visible where the key was.
  const files = await listFiles(join(dir, '.legion'));
  const session = files.find((f) => f.endsWith('session-user__keeper__default.jsonl'))!;
  const history = await readFile(join(dir, '.legion', session), 'utf8');
  assert.match(history, /ANTHROPIC_API_KEY=\[REDACTED\]/);
  assert.match(history, /echo \[REDACTED\]/);
  assert.match(history, /All set, the key \[REDACTED\] is in config\/key\.txt\./);
  const results = history.split('\n').filter(Boolean).map((l) => JSON.parse(l)).flatMap((m) => m.content).filter((b: any) => b.type === 'tool_result');
  assert.ok(results.length >= 4 && results.every((r: any) => r.isError !== true), `every tool ran: ${JSON.stringify(results)}`);
  const todos = files.find((f) => f.endsWith('todos.json'))!;
  assert.match(await readFile(join(dir, '.legion', todos), 'utf8'), /rotate \[REDACTED\]/);
  assert.match(await readFile(join(dir, '.legion', 'collective', 'participants', 'keeper.json'), 'utf8'), /keeps \[REDACTED\]/);
  return files.length;
}

test('secrets through main(): legion run and legion run --json never write or print the API key', { timeout: 60_000 }, async (t) => {
  const key = `sk-ant-test-${randomBytes(16).toString('hex')}`;
  const server = await startStrictApiServer({ reply: modelFor(key) });
  try {
    await withTempDir(async (dir) => {
      await workspace(dir);
      const env = { HOME: dir, ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: server.url, LEGION_MODEL: 'claude-haiku-4-5' };
      const cli = (args: string[]) => runCli(['run', '--to', 'keeper', '--approve', 'all', ...args], { cwd: dir, env, appDir: APP_DIR });
      const text = await cli([`keep my key ${key} in config/key.txt`]);
      assert.equal(text.stdout, 'All set, the key [REDACTED] is in config/key.txt.\n');
      const json = await cli(['--json', `again: ${key}`]);
      t.diagnostic(`${await check(dir, key, { text, json }, server)} files under .legion/ grepped`);
      // The model saw the key only where the user sent it in this very request, never from history.
      const last = JSON.stringify(server.requests.at(-1)!.body.messages.slice(0, -3));
      assert.ok(!last.includes(key), 'earlier messages sent back to the model are scrubbed');
    });
  } finally {
    await server.close();
  }
});

test('secrets through the built bundle: dist/legion.js run --json never writes or prints the API key', { timeout: 120_000 }, async () => {
  ensureBundle();
  const key = `sk-ant-test-${randomBytes(16).toString('hex')}`;
  const server = await startStrictApiServer({ reply: modelFor(key) });
  try {
    await withTempDir(async (dir) => {
      await workspace(dir);
      const env = { PATH: process.env.PATH ?? '', HOME: dir, ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: server.url, LEGION_MODEL: 'claude-haiku-4-5' };
      const child = spawn(process.execPath, [BUNDLE, 'run', '--to', 'keeper', '--approve', 'all', '--json', `store ${key}`], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => void (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
      const code = await new Promise<number | null>((r) => child.on('close', r));
      await check(dir, key, { 'bundle json': { code: code ?? -1, stdout, stderr } }, server);
    });
  } finally {
    await server.close();
  }
});
