import '../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli, type CliRun } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { startVendorServer, sse, json, type ScriptedResponse, type VendorServer } from '../../helpers/vendor-server';
import { anthropicStream, openaiStream } from '../../helpers/vendor-streams';
import { trustWorkspace } from '../../helpers/trust';

/**
 * Provider faults through `legion run` (issue 9): each ends the run with one readable line on
 * stderr and a non-zero exit, never a stack trace, and leaves the session valid: the next turn is
 * sent with a history the server checks the way the real APIs do (`strictHistory`).
 */
const APP_DIR = fileURLToPath(new URL('../../../', import.meta.url));
let server: VendorServer;
before(async () => {
  server = await startVendorServer({ strictHistory: true });
});
after(() => server.close());

function assertReadableFailure(r: CliRun, pattern: RegExp): void {
  assert.notEqual(r.code, 0, `exit code; stdout=${r.stdout} stderr=${r.stderr}`);
  assert.match(r.stderr, pattern);
  assert.doesNotMatch(r.stderr, /\n\s+at .+\(.+:\d+:\d+\)/, 'no stack trace');
  assert.doesNotMatch(r.stderr, /TypeError|SyntaxError|undefined/);
}

for (const vendor of ['anthropic', 'openai'] as const) {
  test(`${vendor}: faults in a row through legion run, then a normal turn with a valid history`, async () => {
    await withTempDir(async (dir) => {
      await mkdir(join(dir, '.legion'), { recursive: true, mode: 0o700 });
      // idleTimeoutMs 2 s: the idle cases hold the stream until the client gives up, so only the timeout ends them,
      // and a loaded machine never turns a normal reply's gaps into an idle error.
      await writeFile(join(dir, '.legion', 'config.yaml'), 'providers:\n  idleTimeoutMs: 2000\n  maxRetries: 1\n', { mode: 0o600 });
      const env =
        vendor === 'anthropic'
          ? { HOME: dir, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: server.anthropicURL, LEGION_MODEL: 'claude-haiku-4-5' }
          : { HOME: dir, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.openaiURL, LEGION_MODEL: 'gpt-4.1' };
      await trustWorkspace(dir, env);
      const text = (parts: string[]) => (vendor === 'anthropic' ? anthropicStream({ text: parts }) : openaiStream({ text: parts }));
      const tool = (json: string[], opts: { unterminated?: boolean } = {}) =>
        vendor === 'anthropic'
          ? anthropicStream({ text: ['Let me look.'], tool: { id: 'toolu_x1', name: 'list_participants', json }, ...opts })
          : openaiStream({ text: ['Let me look.'], toolDeltas: [{ index: 0, id: 'call_x1', name: 'list_participants', args: json.join('') }], ...(opts.unterminated ? { finishReason: null, usage: null, done: false } : {}) });
      const run = async (response: ScriptedResponse | ScriptedResponse[], message: string) => {
        server.enqueue(...([] as ScriptedResponse[]).concat(response));
        return runCli(['run', message], { cwd: dir, env, appDir: APP_DIR });
      };

      assertReadableFailure(await run(json(401, { error: { type: 'authentication_error', message: 'invalid x-api-key' } }), 'one'), new RegExp(`the API key for ${vendor} was rejected: set ${vendor === 'anthropic' ? 'ANTHROPIC' : 'OPENAI'}_API_KEY`));

      const cut = tool(['{"filter": "ag', 'ents"}']);
      assertReadableFailure(await run(sse(cut, { hangUpAfterBytes: cut.indexOf('ents'), chunkBytes: 40 }), 'two'), /connection dropped|ended before the reply was complete/);

      // A complete tool call, then the stream is cut: the call must not be left unanswered.
      const whole = tool(['{}'], { unterminated: true });
      assertReadableFailure(await run(sse(whole, { hangUpAfterBytes: whole.length }), 'three'), new RegExp(`${vendor}: `));

      assertReadableFailure(await run(sse(text(['stalled', ' forever']), { stallAfterBytes: 200 }), 'four'), new RegExp(`no data from ${vendor} for 2 s`));

      assertReadableFailure(await run({ kind: 'raw', status: 200, contentType: 'text/html', body: '<html>oops</html>' }, 'five'), /not an event stream \(text\/html\)/);

      const overloaded = vendor === 'anthropic' ? 529 : 503;
      assertReadableFailure(await run([json(overloaded, { error: { type: 'overloaded_error', message: 'Overloaded' } }), json(overloaded, { error: { type: 'overloaded_error', message: 'Overloaded' } })], 'six'), /gave up after 1 retry/);

      const ok = await run(sse(text(['All good now.'])), 'seven');
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(ok.stdout, 'All good now.\n');
      const refused = server.requests.filter((r) => r.rejected);
      assert.deepEqual(refused.map((r) => r.rejected), [], 'every request carried a history the API accepts');
      const last = server.requests.at(-1)!.body;
      // The failed turns' messages are kept (consecutive user messages may be merged).
      const userWords = (last.messages as Array<{ role: string; content: unknown }>)
        .filter((m) => m.role === 'user')
        .flatMap((m) => (typeof m.content === 'string' ? [m.content] : (m.content as Array<{ text?: string }>).map((b) => b.text ?? '')))
        .join('\n')
        .split(/\s+/)
        .filter(Boolean);
      assert.deepEqual(userWords, ['one', 'two', 'three', 'four', 'five', 'six', 'seven']);
    });
  });
}
