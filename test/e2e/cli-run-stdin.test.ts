import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bundlePath, ensureBundle } from '../helpers/bundle';
import { withTempDir } from '../helpers/tmp';
import { hasTmux, startTmux } from '../helpers/tmux';
import type { LegionEvent } from '../../src/events/types';
import { PIPED_INPUT_MAX_BYTES } from '../../src/cli/piped-input';

// `cat error.log | legion run "explain this"` through the built CLI: what reaches the agent is
// read back from the `--json` event stream (the user's message as the session recorded it).

const SCRIPT = 'version: 1\nfallback: "got it"\nreplies: []\n';

async function env(dir: string): Promise<NodeJS.ProcessEnv> {
  await writeFile(join(dir, 'script.yaml'), SCRIPT);
  return { PATH: process.env.PATH ?? '', HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
}

function run(dir: string, environment: NodeJS.ProcessEnv, args: string[], input?: string | Buffer) {
  const r = spawnSync(process.execPath, [bundlePath, 'run', '--json', ...args], {
    cwd: dir, env: environment, encoding: 'utf8', timeout: 30_000, ...(input === undefined ? { stdio: ['ignore', 'pipe', 'pipe'] } : { input }),
  });
  const events = r.stdout.trim() ? r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as LegionEvent) : [];
  const sent = events.flatMap((e) => (e.type === 'message-add' && e.message.role === 'user' ? e.message.content : []))
    .flatMap((c) => (c.type === 'text' ? [c.text] : []));
  return { code: r.status, stderr: r.stderr, sent };
}

test('legion run: piped stdin is attached to the message, fenced, with its size', async () => {
  ensureBundle({ e2e: true });
  await withTempDir(async (dir) => {
    const e = await env(dir);
    const r = run(dir, e, ['explain', 'this'], 'TypeError: x is undefined\n    at f (a.js:1)\n');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.sent, ['explain this\n\nPiped input (44 bytes):\n```\nTypeError: x is undefined\n    at f (a.js:1)\n```']);
  });
});

test('legion run - and legion run with only piped input: stdin is the message', async () => {
  ensureBundle({ e2e: true });
  await withTempDir(async (dir) => {
    const e = await env(dir);
    const dash = run(dir, e, ['-'], 'summarize the README\n');
    assert.equal(dash.code, 0, dash.stderr);
    assert.deepEqual(dash.sent, ['summarize the README\n']);
    const bare = run(dir, e, [], 'and now the docs');
    assert.equal(bare.code, 0, bare.stderr);
    assert.deepEqual(bare.sent, ['and now the docs']);
    const none = run(dir, e, [], '');
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^legion: legion run needs a message/);
  });
});

test('legion run: piped input over the cap is cut, and both the model and the user are told', async () => {
  ensureBundle({ e2e: true });
  await withTempDir(async (dir) => {
    const e = await env(dir);
    const total = PIPED_INPUT_MAX_BYTES + 5000;
    const r = run(dir, e, ['what is in here?'], 'z'.repeat(total));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`note: piped input was ${total.toLocaleString('en-US')} bytes; only the first ${PIPED_INPUT_MAX_BYTES.toLocaleString('en-US')} bytes were sent`));
    const [message] = r.sent;
    assert.ok(message?.startsWith(`what is in here?\n\nPiped input (${total.toLocaleString('en-US')} bytes; only the first ${PIPED_INPUT_MAX_BYTES.toLocaleString('en-US')} bytes are shown, the rest was cut):\n\`\`\`\n`));
    assert.equal(message.match(/z/g)?.length, PIPED_INPUT_MAX_BYTES);
    const binary = run(dir, e, ['look'], Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01]));
    assert.equal(binary.code, 2);
    assert.match(binary.stderr, /piped input looks binary/);
  });
});

/** Run `args` of the built CLI in a terminal (stdin, stdout, stderr a tty, except stderr to a file); its exit code and stderr. */
async function inTerminal(dir: string, environment: NodeJS.ProcessEnv, args: string): Promise<{ code: number; stderr: string; screen: string }> {
  const tmux = startTmux({ command: `${process.execPath} ${bundlePath} ${args} 2>err.txt; echo $? > code.txt`, cwd: dir, env: { ...environment, TERM: 'xterm-256color' } });
  try {
    await tmux.waitFor(() => tmux.dead(), 30_000, `legion ${args} to exit`);
    return { code: Number(await readFile(join(dir, 'code.txt'), 'utf8')), stderr: await readFile(join(dir, 'err.txt'), 'utf8'), screen: tmux.capture() };
  } finally {
    tmux.kill();
  }
}

test('legion run in a terminal never reads stdin (it answers without waiting for input)', { skip: !hasTmux() && 'tmux missing' }, async () => {
  ensureBundle({ e2e: true });
  await withTempDir(async (dir) => {
    const e = await env(dir);
    const answered = await inTerminal(dir, e, 'run "hello there"');
    assert.equal(answered.code, 0, answered.stderr);
    const dash = await inTerminal(dir, e, 'run -');
    assert.equal(dash.code, 2);
    assert.match(dash.stderr, /^legion: legion run -: stdin is a terminal/);
  });
});
