import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR } from '../../helpers/app-harness';
import { trustWorkspace } from '../../helpers/trust';

/** `legion run` with a tiny window (faux provider): compactions happen across runs and `--json` prints them. */
const SCRIPT = `
version: 1
replies:
  - { agent: ur-agent, purpose: compaction, repeat: true, text: "SUMMARY: several long messages were given." }
  - { agent: ur-agent, on: message, repeat: true, text: "noted" }
`;

test('legion run --json prints compaction and context-size events; the next run resumes from the summary', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'script.yaml'), SCRIPT);
    await mkdir(join(dir, '.legion'), { recursive: true });
    await writeFile(join(dir, '.legion', 'config.yaml'), 'context:\n  defaultWindow: 6000\n');
    const env = { HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
    await trustWorkspace(dir, env);
    const events: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 10; i++) {
      const r = await runCli(['run', '--json', `part ${i}: ${'words and more words '.repeat(40)}`], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(r.code, 0, r.stderr);
      events.push(...r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>));
    }
    const compactions = events.filter((e) => e.type === 'compaction');
    assert.ok(compactions.some((e) => e.kind === 'summary' && e.summary === 'SUMMARY: several long messages were given.'), JSON.stringify(compactions));
    for (const e of compactions) assert.ok((e.tokensAfter as number) < (e.tokensBefore as number));
    const sizes = events.filter((e) => e.type === 'context-size');
    assert.equal(sizes.length, 10);
    assert.ok(sizes.every((e) => e.window === 6000 && (e.tokens as number) <= 0.6 * 6000 + 400), JSON.stringify(sizes.map((e) => e.tokens)));
  });
});

test('legion run: a reached budget ends the run with exit 5 and one line saying which', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'script.yaml'), `
version: 1
replies:
  - { agent: ur-agent, on: message, toolCalls: [{ name: list_participants, input: {} }], usage: { inputTokens: 900, outputTokens: 200 } }
  - { agent: ur-agent, on: tool-result, text: "done" }
`);
    await mkdir(join(dir, '.legion'), { recursive: true });
    await writeFile(join(dir, '.legion', 'config.yaml'), 'budgets:\n  turnTokens: 1000\n');
    const env = { HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
    await trustWorkspace(dir, env);
    const r = await runCli(['run', '--approve', 'all', 'go'], { cwd: dir, env, appDir: APP_DIR });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /^legion: ur-agent: budget reached: budgets\.turnTokens \(1100 tokens of 1000 tokens\)/m);
  });
});
