import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../helpers/cli';
import { withTempDir } from '../helpers/tmp';
import { EVENT_TYPES, type LegionEvent } from '../../src/events/types';
import { APP_DIR } from '../helpers/app-harness';
import { trustWorkspace } from '../helpers/trust';

/** `legion run` end to end through main(), the faux provider scripted by LEGION_FAUX_SCRIPT. */

const SCRIPT = `
version: 1
replies:
  - { agent: ur-agent, on: message, when: "^hello", text: "Hello from ur-agent." }
  - { agent: ur-agent, on: message, when: "^delegate", toolCalls: [{ name: communicator, input: { targetId: writer, message: "write it", sessionName: docs } }] }
  - { agent: writer, on: message, toolCalls: [{ name: file_write, input: { path: out.md, content: "# out" } }] }
  - { agent: writer, on: tool-error, text: "not written: {{lastText}}" }
  - { agent: writer, on: tool-result, text: "written" }
  - { agent: ur-agent, on: tool-result, text: "writer says: {{lastText}}" }
  - { agent: ur-agent, on: message, when: "^fail", text: "partial", error: { message: "401 invalid x-api-key", status: 401 } }
  - { agent: ur-agent, on: message, text: "echo: {{lastText}}" }
`;

async function workspace(dir: string): Promise<Record<string, string>> {
  await writeFile(join(dir, 'script.yaml'), SCRIPT);
  // Private like Legion's own files, so no tightening notice joins stderr (docs/cli-conventions.md).
  await mkdir(join(dir, '.legion', 'collective', 'participants'), { recursive: true, mode: 0o700 });
  await writeFile(join(dir, '.legion', 'collective', 'participants', 'writer.json'), JSON.stringify({
    version: 1, id: 'writer', kind: 'agent', name: 'Writer', description: 'writes', systemPrompt: 'You write files.', tools: ['file_write'],
  }), { mode: 0o600 });
  const env = { HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
  await trustWorkspace(dir, env);
  return env;
}

const run = (argv: string[], dir: string, env: Record<string, string>) => runCli(['run', ...argv], { cwd: dir, env, appDir: APP_DIR });

test('legion run: prints the responder\'s final text and exits 0; the run is created and resumed next time', async () => {
  await withTempDir(async (dir) => {
    const env = await workspace(dir);
    const first = await run(['hello', 'there'], dir, env);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, 'Hello from ur-agent.\n');
    assert.ok(existsSync(join(dir, '.legion', 'runs')));
    const second = await run(['--to', 'ur-agent', '--session', 'notes', 'what now'], dir, env);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /^echo: what now/);
  });
});

test('legion run --json: only event-union objects, one per line, seq +1 each, run-start first and run-end last', async () => {
  await withTempDir(async (dir) => {
    const env = await workspace(dir);
    const result = await run(['--json', '--approve', 'all', 'delegate the write'], dir, env);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    const events = lines.map((l) => JSON.parse(l) as LegionEvent);
    for (const event of events) {
      assert.ok(EVENT_TYPES.includes(event.type), `unknown type ${event.type}`);
      assert.equal(typeof event.seq, 'number');
      assert.equal(typeof event.at, 'string');
      assert.equal(typeof event.runId, 'string');
    }
    events.forEach((e, i) => i > 0 && assert.equal(e.seq, events[i - 1]!.seq + 1));
    assert.equal(events[0]!.type, 'run-start');
    assert.equal(events.at(-1)!.type, 'run-end');
    assert.ok(events.some((e) => e.type === 'session-open' && e.sessionId === 'session-ur-agent__writer__docs'));
    assert.ok(events.some((e) => e.type === 'approval-resolve' && e.decidedBy === 'headless' && e.decision === 'approved'));
    assert.ok(existsSync(join(dir, 'out.md')));
  });
});

test('legion run: --approve deny (default) rejects what would reach the user, says so on stderr, exit 0', async () => {
  await withTempDir(async (dir) => {
    const env = await workspace(dir);
    const result = await run(['delegate the write'], dir, env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^writer says: not written: rejected by headless/);
    assert.match(result.stderr, /1 action\(s\) needing approval were rejected \(--approve deny\): apr-1/);
    assert.equal(existsSync(join(dir, 'out.md')), false);
  });
});

test('legion run: a provider failure is one line on stderr, exit 3, no stack; the API key is never printed', async () => {
  await withTempDir(async (dir) => {
    const env = { ...(await workspace(dir)), ANTHROPIC_API_KEY: 'sk-ant-secret-value-123456' };
    const result = await run(['fail now'], dir, env);
    assert.equal(result.code, 3);
    assert.equal(result.stderr, 'legion: ur-agent: 401 invalid x-api-key\n');
    const json = await run(['--json', 'my key is sk-ant-secret-value-123456'], dir, env);
    assert.equal(json.code, 0);
    assert.ok(!json.stdout.includes('sk-ant-secret-value-123456'));
    assert.match(json.stdout, /\[REDACTED\]/);
  });
});

test('legion run: configuration, rules and usage failures are one clear line and a non-zero exit', async () => {
  await withTempDir(async (dir) => {
    const env = await workspace(dir);
    const noMessage = await run([], dir, env);
    assert.equal(noMessage.code, 2);
    assert.match(noMessage.stderr, /^legion: legion run needs a message/);
    const badApprove = await run(['--approve', 'maybe', 'hi'], dir, env);
    assert.equal(badApprove.code, 2);
    const unknown = await run(['--to', 'nobody', 'hi'], dir, env);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr, 'legion: no participant "nobody"\n');
    await writeFile(join(dir, '.legion', 'config.yaml'), 'runtime:\n  maxDepth: -3\n');
    const badConfig = await run(['hi'], dir, env);
    assert.equal(badConfig.code, 1);
    assert.match(badConfig.stderr, /^legion: .*config\.yaml:2: runtime\.maxDepth: .*\n$/);
    await writeFile(join(dir, '.legion', 'config.yaml'), '');
    await writeFile(join(dir, '.legion', 'rules.yaml'), 'version: 1\nrules:\n  - id: x\n    decision: maybe\n    tool: shell\n');
    const badRules = await run(['hi'], dir, env);
    assert.equal(badRules.code, 1);
    assert.match(badRules.stderr, /^legion: .*rules\.yaml:4: .*\n$/);
    assert.equal(badRules.stderr.split('\n').length, 2, 'one line');
    await writeFile(join(dir, '.legion', 'rules.yaml'), 'version: 1\nrules: []\n');
    const badScript = await run(['hi'], dir, { ...env, LEGION_FAUX_SCRIPT: join(dir, 'missing.yaml') });
    assert.equal(badScript.code, 1);
    assert.match(badScript.stderr, /missing\.yaml: cannot read the faux script/);
  });
});

/**
 * The final text `legion run` prints comes from a model (and through it from files and tool
 * output): printed as is, an escape sequence in it reached the user's terminal — OSC 52 writes
 * the clipboard in terminals that allow it (the next paste runs it in the user's shell), OSC 0
 * retitles the window, CSI moves the cursor over what was printed. Dropped, as the TUI does.
 */
test('legion run prints the text without terminal control sequences (OSC 52, C1 OSC, CSI)', async () => {
  await withTempDir(async (dir) => {
    const env = await workspace(dir);
    const result = await run(['a\x1b]52;c;ZWNobyBwd25lZA==\x07b \x9d0;title\x9c c\x1b[2Ad\x1b[8mhidden\x1b[0m'], dir, env);
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stdout, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/, JSON.stringify(result.stdout));
    assert.equal(result.stdout, 'echo: a52;c;ZWNobyBwd25lZA==b 0;title cdhidden\n');
  });
});
