import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../helpers/cli';
import { withTempDir } from '../helpers/tmp';
import type { LegionEvent } from '../../src/events/types';
import { APP_DIR } from '../helpers/app-harness';
import { realProbe } from '../helpers/sandbox-fixture';
import { trustWorkspace } from '../helpers/trust';

/** The shell sandbox through `legion run` (the composition root, the rules, the approval path), faux provider. */
const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;
/**
 * What the shell call writes: a file in the test's own temp folder that the sandbox keeps
 * read-only (`.git/hooks` of the workspace, docs/sandbox.md#git), so a sandboxed run is blocked
 * and an unconfined one writes only there (removed with the folder), never in the machine's /etc.
 * (Not `.legion/`: it is hidden in the sandbox, and the shipped rules refuse commands naming it.)
 */
const targetIn = (dir: string): string => join(dir, '.git', 'hooks', 'sandbox-run-planted');

const scriptFor = (target: string): string => `
version: 1
replies:
  - { agent: builder, on: message, toolCalls: [{ name: shell, input: { command: "echo planted > '${target}'" } }] }
  - { agent: builder, on: tool-error, text: "failed: {{lastText}}" }
  - { agent: builder, on: tool-result, text: "done: {{lastText}}" }
`;

async function workspace(dir: string, config?: string): Promise<Record<string, string>> {
  execFileSync('git', ['init', '-q', dir]);
  await mkdir(join(dir, '.git', 'hooks'), { recursive: true });
  await writeFile(join(dir, 'script.yaml'), scriptFor(targetIn(dir)));
  await mkdir(join(dir, '.legion', 'collective', 'participants'), { recursive: true });
  await writeFile(join(dir, '.legion', 'collective', 'participants', 'builder.json'), JSON.stringify({
    version: 1, id: 'builder', kind: 'agent', name: 'Builder', description: 'builds', systemPrompt: 'You build.', tools: ['shell'],
  }));
  if (config) await writeFile(join(dir, '.legion', 'config.yaml'), config);
  await trustWorkspace(dir, { HOME: dir });
  return { HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
}

test('legion run: an approved shell call runs sandboxed, the approval and the tool start say so, the blocked write is explained', { skip }, async () => {
  await withTempDir(async (dir) => {
    const env = await workspace(dir);
    const result = await runCli(['run', '--to', 'builder', '--json', '--approve', 'all', 'plant it'], { cwd: dir, env, appDir: APP_DIR });
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stderr, /WITHOUT a sandbox/);
    const events = result.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as LegionEvent);
    const start = events.find((e) => e.type === 'tool-call-start' && e.name === 'shell');
    assert.equal(start?.type === 'tool-call-start' && start.sandboxed, true, result.stderr);
    const request = events.find((e) => e.type === 'approval-request');
    assert.equal(request?.type === 'approval-request' && request.sandboxed, true);
    const reply = events.filter((e) => e.type === 'message-add').map((e) => JSON.stringify(e)).join('\n');
    assert.match(reply, /Read-only file system/);
    assert.match(reply, /blocked by the sandbox: write outside the workspace/);
    assert.equal(existsSync(targetIn(dir)), false);
  });
});

test('legion run: sandbox on without bubblewrap refuses the shell call and says why at start', async () => {
  await withTempDir(async (dir) => {
    const env = { ...(await workspace(dir, 'sandbox: on\n')), PATH: '/nonexistent-legion-bin' };
    const result = await runCli(['run', '--to', 'builder', '--approve', 'all', 'plant it'], { cwd: dir, env, appDir: APP_DIR });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /sandbox: on, but no sandbox can be made \(bubblewrap is not installed/);
    assert.match(result.stdout, /^failed: refused: sandbox is on, but no sandbox can be made here \(bubblewrap is not installed/);
    assert.equal(existsSync(targetIn(dir)), false);
  });
});

test('legion run: sandbox auto without bubblewrap says so once and runs unconfined', async () => {
  await withTempDir(async (dir) => {
    const env = { ...(await workspace(dir)), PATH: '/nonexistent-legion-bin' };
    const result = await runCli(['run', '--to', 'builder', '--json', '--approve', 'all', 'plant it'], { cwd: dir, env, appDir: APP_DIR });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr.match(/shell commands run WITHOUT a sandbox: bubblewrap is not installed/g)?.length, 1, result.stderr);
    const events = result.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as LegionEvent);
    const request = events.find((e) => e.type === 'approval-request');
    assert.equal(request?.type === 'approval-request' && request.sandboxed, false);
    // Unconfined, the command wrote where it was told: inside this test's temp folder only.
    assert.equal(readFileSync(targetIn(dir), 'utf8'), 'planted\n');
  });
});

test('legion run: sandbox.env and sandbox.hide from the workspace config reach the sandboxed call; tokens in Legion\'s environment do not', { skip }, async () => {
  await withTempDir(async (dir) => {
    const env = await workspace(dir, 'sandbox:\n  env: [MY_TOOL_MODE]\n  hide: [private]\n');
    await mkdir(join(dir, 'private'));
    await writeFile(join(dir, 'private', 'key.txt'), 'HIDDEN-KEY-MATERIAL\n');
    await writeFile(join(dir, 'script.yaml'), `
version: 1
replies:
  - { agent: builder, on: message, toolCalls: [{ name: shell, input: { command: "echo mode=$MY_TOOL_MODE token=\${GITHUB_TOKEN:-absent}; cat private/key.txt" } }] }
  - { agent: builder, on: tool-error, text: "failed: {{lastText}}" }
  - { agent: builder, on: tool-result, text: "done: {{lastText}}" }
`);
    // The shell's environment comes from this process (the CLI's own).
    const saved = { GITHUB_TOKEN: process.env.GITHUB_TOKEN, MY_TOOL_MODE: process.env.MY_TOOL_MODE };
    process.env.GITHUB_TOKEN = 'ghp_integration_secret';
    process.env.MY_TOOL_MODE = 'fast';
    try {
      const result = await runCli(['run', '--to', 'builder', '--approve', 'all', 'show it'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /mode=fast token=absent/);
      assert.doesNotMatch(result.stdout, /ghp_integration_secret|HIDDEN-KEY-MATERIAL/);
      assert.match(result.stdout, /Permission denied/);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
