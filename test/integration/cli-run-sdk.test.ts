import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/cli';
import { withTempDir } from '../helpers/tmp';
import { APP_DIR } from '../helpers/app-harness';
import { json, sse, startVendorServer } from '../helpers/vendor-server';
import { anthropicStream, openaiStream } from '../helpers/vendor-streams';

/**
 * `legion run` against the real SDKs, their base URL pointed at a local server that refuses
 * histories the real APIs would refuse (a tool_use without its result, …).
 */

test('legion run over the Anthropic SDK: a tool call, its result, the final text; the history the API sees is valid', async () => {
  const server = await startVendorServer({ strictHistory: true });
  try {
    server.enqueue(
      sse(anthropicStream({ text: ['Let me look.'], tool: { id: 'toolu_1', name: 'list_participants', json: ['{}'] }, stopReason: 'tool_use' })),
      sse(anthropicStream({ text: ['The collective has ', 'three members.'], stopReason: 'end_turn' })),
    );
    await withTempDir(async (dir) => {
      const env = { HOME: dir, ANTHROPIC_API_KEY: 'sk-ant-test-key-0123456789', ANTHROPIC_BASE_URL: server.anthropicURL };
      const result = await runCli(['run', 'who is here?'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'The collective has three members.\n');
      assert.equal(server.requests.length, 2);
      assert.deepEqual(server.requests.map((r) => r.rejected), [null, null]);
      const second = server.requests[1]!.body as { messages: { role: string; content: { type: string; tool_use_id?: string }[] }[]; tools: { name: string }[]; system: unknown };
      assert.deepEqual(second.messages.map((m) => m.role), ['user', 'assistant', 'user']);
      assert.equal(second.messages[2]!.content[0]!.tool_use_id, 'toolu_1');
      assert.ok(second.tools.some((t) => t.name === 'communicator'));
      assert.ok(!result.stderr.includes('sk-ant-test-key-0123456789'));
    });
  } finally {
    await server.close();
  }
});

test('legion run over the OpenAI SDK: a refused tool call is answered, the next request is valid; a 401 is one line and exit 3', async () => {
  const server = await startVendorServer({ strictHistory: true });
  try {
    await withTempDir(async (dir) => {
      const env = { HOME: dir, OPENAI_API_KEY: 'sk-test-openai-0123456789abcdef', OPENAI_BASE_URL: server.openaiURL, LEGION_PROVIDER: 'openai' };
      server.enqueue(
        sse(openaiStream({ toolDeltas: [{ index: 0, id: 'call_1', name: 'spawn_agent', args: '{"id":"scribe","name":"Scribe",' }, { index: 0, args: '"systemPrompt":"You write.","tools":["file_read"],"approvalAuthority":"*"}' }] })),
        sse(openaiStream({ text: ['Could not: ', 'spawn refused.'] })),
      );
      const result = await runCli(['run', '--to', 'resource-agent', 'make a scribe that approves everything'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'Could not: spawn refused.\n');
      assert.deepEqual(server.requests.map((r) => r.rejected), [null, null]);
      const toolMessage = (server.requests[1]!.body as { messages: { role: string; content: string; tool_call_id?: string }[] }).messages.find((m) => m.role === 'tool');
      assert.equal(toolMessage?.tool_call_id, 'call_1');
      assert.match(toolMessage!.content, /cannot grant approvalAuthority/);

      server.enqueue(json(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }));
      const failed = await runCli(['run', 'hello'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(failed.code, 3);
      assert.equal(failed.stderr.split('\n').length, 2, `one line: ${failed.stderr}`);
      assert.match(failed.stderr, /^legion: ur-agent: /);
      assert.ok(!failed.stderr.includes('sk-test-openai-0123456789abcdef'));
    });
  } finally {
    await server.close();
  }
});
