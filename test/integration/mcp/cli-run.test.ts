import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR } from '../../helpers/app-harness';
import { sse, startVendorServer } from '../../helpers/vendor-server';
import { anthropicStream, openaiStream } from '../../helpers/vendor-streams';
import { EVERYTHING_BIN } from '../../helpers/mcp-servers';

/**
 * End to end: `legion run` composes the app with MCP servers configured, an agent granted
 * `mcp__everything__echo` calls it through the real SDKs (their base URL on the local vendor
 * server, which refuses tool definitions and histories the real APIs would refuse), and the
 * rules and headless approvals apply to the call like to any tool.
 */
interface Workspace { dir: string; home: string; env: Record<string, string> }

async function workspace(dir: string, extraEnv: Record<string, string>): Promise<Workspace> {
  const root = join(dir, 'ws');
  const home = join(dir, 'home');
  await mkdir(root, { recursive: true });
  await mkdir(join(home, '.config', 'legion'), { recursive: true });
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ...extraEnv };
  const init = await runCli(['init'], { cwd: root, env, appDir: APP_DIR });
  assert.equal(init.code, 0, init.stderr);
  const template = JSON.parse(await readFile(join(root, '.legion', 'collective', 'participants', 'resource-agent.json'), 'utf8'));
  const echoer = { ...template, id: 'echoer', name: 'Echoer', description: 'Echoes through MCP', tools: ['mcp__everything__echo'], systemPrompt: 'Echo.' };
  await writeFile(join(root, '.legion', 'collective', 'participants', 'echoer.json'), JSON.stringify(echoer, null, 2));
  return { dir: await realpath(root), home, env };
}

const userServers = (home: string): Promise<void> =>
  writeFile(join(home, '.config', 'legion', 'config.yaml'), `mcpServers:\n  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING_BIN)}, stdio]\n`);

test('legion run (Anthropic SDK): a rule allows mcp__everything__echo; the call reaches the real server and its result the model', async () => {
  const server = await startVendorServer({ strictHistory: true });
  try {
    await withTempDir(async (dir) => {
      const ws = await workspace(dir, { ANTHROPIC_API_KEY: 'sk-ant-test-key-0123456789', ANTHROPIC_BASE_URL: server.anthropicURL });
      await userServers(ws.home);
      await writeFile(join(ws.dir, '.legion', 'rules.yaml'), 'version: 1\nrules:\n  - id: echo-ok\n    decision: allow\n    tool: "mcp__everything__echo"\n    match: { message: "hello*" }\n');
      server.enqueue(
        sse(anthropicStream({ tool: { id: 'toolu_1', name: 'mcp__everything__echo', json: ['{"message":', '"hello mcp"}'] }, stopReason: 'tool_use' })),
        sse(anthropicStream({ text: ['done'], stopReason: 'end_turn' })),
      );
      const result = await runCli(['run', '--json', '--to', 'echoer', 'echo something'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(server.requests.map((r) => r.rejected), [null, null]);
      const first = server.requests[0]!.body as { tools: { name: string; input_schema: any }[] };
      assert.deepEqual(first.tools.map((t) => t.name), ['recall', 'mcp__everything__echo'], 'only what the agent holds (and recall, which every agent has)');
      assert.equal(first.tools[0]!.input_schema.type, 'object');
      const second = server.requests[1]!.body as { messages: { content: any[] }[] };
      const toolResult = second.messages[2]!.content.find((b: any) => b.type === 'tool_result');
      assert.equal(toolResult.is_error ?? false, false);
      assert.match(JSON.stringify(toolResult.content), /Echo: hello mcp/);
      const events = result.stdout.trim().split('\n').map((l) => JSON.parse(l));
      assert.ok(events.some((e) => e.type === 'mcp-status' && e.server === 'everything' && e.state === 'ready' && e.tools.includes('mcp__everything__echo')));
      assert.ok(events.some((e) => e.type === 'tool-call-end' && e.name === 'mcp__everything__echo' && !e.isError));
      const audit = await readFile(join(ws.dir, '.legion', 'audit', `audit-${new Date().toISOString().slice(0, 10)}.jsonl`), 'utf8');
      assert.match(audit, /"toolName":"mcp__everything__echo".*"ruleId":"echo-ok"|"ruleId":"echo-ok".*"toolName":"mcp__everything__echo"/);
    });
  } finally {
    await server.close();
  }
});

test('legion run (OpenAI SDK): no rule → ask → headless deny, with server, tool and annotations in the request; --approve all runs it', async () => {
  const server = await startVendorServer({ strictHistory: true });
  try {
    await withTempDir(async (dir) => {
      const ws = await workspace(dir, { OPENAI_API_KEY: 'sk-test-openai-0123456789abcdef', OPENAI_BASE_URL: server.openaiURL, LEGION_PROVIDER: 'openai' });
      await userServers(ws.home);
      const call = () => sse(openaiStream({ toolDeltas: [{ index: 0, id: 'call_1', name: 'mcp__everything__echo', args: '{"message":"hi"}' }] }));
      server.enqueue(call(), sse(openaiStream({ text: ['refused'] })));
      const denied = await runCli(['run', '--json', '--to', 'echoer', 'echo'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
      assert.equal(denied.code, 0, denied.stderr);
      const events = denied.stdout.trim().split('\n').map((l) => JSON.parse(l));
      const request = events.find((e) => e.type === 'approval-request');
      assert.equal(request.toolName, 'mcp__everything__echo');
      assert.match(request.reason, /MCP server "everything", tool "echo" \(read-only, idempotent; hints from the server\)/);
      assert.ok(events.some((e) => e.type === 'approval-resolve' && e.decision === 'rejected' && e.decidedBy === 'headless'));
      const toolMessage = (server.requests[1]!.body as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === 'tool')!;
      assert.doesNotMatch(toolMessage.content, /Echo: hi/);

      server.enqueue(call(), sse(openaiStream({ text: ['ok'] })));
      const approved = await runCli(['run', '--approve', 'all', '--to', 'echoer', 'echo'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
      assert.equal(approved.code, 0, approved.stderr);
      assert.equal(approved.stdout, 'ok\n');
      const last = server.requests.at(-1)!.body as { messages: { role: string; content: string }[] };
      assert.match(last.messages.filter((m) => m.role === 'tool').at(-1)!.content, /Echo: hi/);
      assert.deepEqual(server.requests.map((r) => r.rejected), [null, null, null, null]);
    });
  } finally {
    await server.close();
  }
});

test('every server-everything tool schema passes both APIs\' tool rules (agent holding mcp__everything__*)', async () => {
  const server = await startVendorServer({ strictHistory: true });
  try {
    await withTempDir(async (dir) => {
      for (const provider of ['anthropic', 'openai'] as const) {
        const env: Record<string, string> = provider === 'anthropic'
          ? { ANTHROPIC_API_KEY: 'sk-ant-test-key-0123456789', ANTHROPIC_BASE_URL: server.anthropicURL }
          : { OPENAI_API_KEY: 'sk-test-openai-0123456789abcdef', OPENAI_BASE_URL: server.openaiURL, LEGION_PROVIDER: 'openai' };
        const ws = await workspace(join(dir, provider), env);
        await userServers(ws.home);
        const file = join(ws.dir, '.legion', 'collective', 'participants', 'echoer.json');
        await writeFile(file, JSON.stringify({ ...JSON.parse(await readFile(file, 'utf8')), tools: ['mcp__everything__*'] }));
        server.enqueue(provider === 'anthropic' ? sse(anthropicStream({ text: ['fine'], stopReason: 'end_turn' })) : sse(openaiStream({ text: ['fine'] })));
        const result = await runCli(['run', '--to', 'echoer', 'hi'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
        assert.equal(result.code, 0, result.stderr);
        const request = server.requests.at(-1)!;
        assert.equal(request.rejected, null);
        const tools = (request.body.tools as any[]).map((t) => t.name ?? t.function.name);
        assert.ok(tools.length >= 12, tools.join(', '));
        assert.ok(tools.every((n) => n === 'recall' || n.startsWith('mcp__everything__')), tools.join(', '));
      }
    });
  } finally {
    await server.close();
  }
});

test('an untrusted .mcp.json starts nothing; `legion mcp trust` approves it; a changed command asks again', async () => {
  await withTempDir(async (dir) => {
    const ws = await workspace(dir, {});
    const marker = join(dir, 'started.txt');
    // The server writes a marker when it starts: proof of whether anything ran.
    const entry = (arg: string) => ({ command: '/bin/sh', args: ['-c', `echo ${arg} >> ${marker}; exec "${process.execPath}" "${EVERYTHING_BIN}" stdio`] });
    await writeFile(join(ws.dir, '.mcp.json'), JSON.stringify({ mcpServers: { everything: entry('one') } }));
    const listed = await runCli(['mcp', 'list'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^everything {2}untrusted {2}stdio: \/bin\/sh -c/m);
    assert.match(listed.stderr, /not trusted yet and did not start/);
    const ran = await runCli(['run', 'hello'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
    assert.equal(ran.code, 0, ran.stderr);
    await assert.rejects(readFile(marker, 'utf8'), /ENOENT/, 'nothing started');

    const trusted = await runCli(['mcp', 'trust', 'everything'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
    assert.equal(trusted.code, 0, trusted.stderr);
    const trustFile = await readFile(join(ws.home, '.config', 'legion', 'mcp-trust.json'), 'utf8');
    assert.ok(trustFile.includes(ws.dir), 'kept in the user\'s config, keyed by workspace');
    const after = await runCli(['mcp', 'list', '--json'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
    const status = JSON.parse(after.stdout).servers[0];
    assert.equal(status.state, 'ready');
    assert.ok(status.tools.some((t: any) => t.name === 'mcp__everything__echo' && t.annotations.readOnlyHint === true));
    assert.equal((await readFile(marker, 'utf8')).trim(), 'one');

    await writeFile(join(ws.dir, '.mcp.json'), JSON.stringify({ mcpServers: { everything: entry('two') } }));
    const changed = await runCli(['mcp', 'list'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
    assert.match(changed.stdout, /^everything {2}untrusted/m);
    assert.equal((await readFile(marker, 'utf8')).trim(), 'one', 'the changed command did not run');
    const bad = await runCli(['mcp', 'trust', 'nope'], { cwd: ws.dir, env: ws.env, appDir: APP_DIR });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /no MCP server "nope"/);
  });
});
