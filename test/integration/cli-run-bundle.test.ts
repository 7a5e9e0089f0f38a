import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../helpers/tmp';
import { bundlePath as BUNDLE, ensureBundle } from '../helpers/bundle';
import { EVENT_TYPES, type LegionEvent } from '../../src/events/types';


test('bundle: `legion run --json` with a faux script prints the event stream and the run resumes', async () => {
  ensureBundle();
  await withTempDir(async (dir) => {
    const script = join(dir, 'script.yaml');
    await writeFile(script, `
version: 1
replies:
  - { agent: ur-agent, on: message, first: true, toolCalls: [{ name: list_participants, input: {} }] }
  - { agent: ur-agent, on: tool-result, text: "The collective: {{lastText}}" }
  - { agent: ur-agent, on: message, text: "second turn" }
`);
    const env = { ...process.env, HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: script, ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', LEGION_DEBUG: '' };
    const first = spawnSync(process.execPath, [BUNDLE, 'run', '--json', 'who is here?'], { cwd: dir, env, encoding: 'utf8', timeout: 20_000 });
    assert.equal(first.status, 0, first.stderr);
    const events = first.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as LegionEvent);
    assert.ok(events.every((e) => EVENT_TYPES.includes(e.type)));
    events.forEach((e, i) => i > 0 && assert.equal(e.seq, events[i - 1]!.seq + 1));
    const final = events.filter((e) => e.type === 'message-add').at(-1);
    assert.ok(final?.type === 'message-add' && final.message.content[0]?.type === 'text' && /resource-agent/.test(final.message.content[0].text));

    const second = spawnSync(process.execPath, [BUNDLE, 'run', 'and now?'], { cwd: dir, env, encoding: 'utf8', timeout: 20_000 });
    assert.equal(second.status, 0, second.stderr);
    assert.equal(second.stdout, 'second turn\n');
  });
});

test('bundle: Ctrl+C (SIGINT) interrupts `legion run`: exit 130, the session stays valid for the next run', async () => {
  ensureBundle();
  await withTempDir(async (dir) => {
    const script = join(dir, 'script.yaml');
    await writeFile(script, `
version: 1
replies:
  - { agent: ur-agent, when: "slow", text: "${'streaming slowly '.repeat(20)}", chunkSize: 1, delayMs: 20 }
  - { agent: ur-agent, when: "quick", text: "quick answer" }
`);
    const env = { ...process.env, HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: script, ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', LEGION_DEBUG: '' };
    const child = spawn(process.execPath, [BUNDLE, 'run', '--json', 'slow please'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    // Interrupt once the answer is streaming (the --json events show it).
    await new Promise<void>((resolve) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('"type":"text-delta"')) resolve();
      });
    });
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    assert.equal(code, 130, stderr);
    assert.match(stderr, /legion: interrupted\n$/);
    const next = spawnSync(process.execPath, [BUNDLE, 'run', 'quick'], { cwd: dir, env, encoding: 'utf8', timeout: 20_000 });
    assert.equal(next.status, 0, next.stderr);
    assert.equal(next.stdout, 'quick answer\n');
  });
});
