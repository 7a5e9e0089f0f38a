import '../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Message } from '../../../src/model/message';
import { planRepair } from '../../../src/model/repair';
import { runCli, type CliRun } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR } from '../../helpers/crash-workspace';
import { fixture, json, sse, startVendorServer, type ScriptedResponse, type VendorServer } from '../../helpers/vendor-server';
import { anthropicStream } from '../../helpers/vendor-streams';
import { trustWorkspace } from '../../helpers/trust';

/**
 * Provider faults through the whole core (issue 9), for the cases test/integration/providers/
 * cli-faults.test.ts does not already drive through `legion run` (it has 401, hang-up mid tool
 * JSON, a cut after a whole tool call, a stall mid-stream, an HTML 200 and exhausted 529s):
 * 429 with retry-after then success, a 529 burst within the budget, 500 until retries run
 * out, a slow first byte, no first byte within the idle timeout, malformed SSE, a 200 whose
 * JSON body is not JSON, a 200 event stream of garbage, an `error` event mid-stream, and a
 * fault on the second model call of a turn (after a tool batch). Each run ends with exit 0
 * (recovered) or one readable stderr line and exit 3, never a stack trace; afterwards every
 * session file is valid and the server, which checks histories like the Anthropic API, has
 * refused none.
 */
let server: VendorServer;
before(async () => {
  server = await startVendorServer({ strictHistory: true });
});
after(() => server.close());

const text = (...parts: string[]): string => anthropicStream({ text: parts });
const err = (status: number, type: string, message: string, headers: Record<string, string> = {}): ScriptedResponse =>
  json(status, { type: 'error', error: { type, message } }, headers);

interface Case {
  readonly name: string;
  readonly responses: ScriptedResponse[];
  /** null: the turn succeeds with `reply`. */
  readonly failure: RegExp | null;
  readonly reply?: string;
  readonly minMs?: number;
}

const CASES: Case[] = [
  { name: '429 with retry-after, then success', responses: [{ kind: 'json', status: 429, body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, headers: { 'retry-after': '0.2' } }, sse(text('after the wait'))], failure: null, reply: 'after the wait', minMs: 180 },
  { name: 'a burst of 529s within the retry budget', responses: [err(529, 'overloaded_error', 'Overloaded'), err(529, 'overloaded_error', 'Overloaded'), sse(text('made it'))], failure: null, reply: 'made it' },
  { name: '500 until the retries run out', responses: [1, 2, 3].map(() => err(500, 'api_error', 'Internal server error')), failure: /^legion: ur-agent: anthropic: 500 api_error: Internal server error \(gave up after 2 retries\)\n$/ },
  { name: 'a slow first byte within the idle timeout', responses: [{ kind: 'sse', body: text('slow', ' but fine'), firstByteDelayMs: 250 }], failure: null, reply: 'slow but fine', minMs: 240 },
  { name: 'no first byte within the idle timeout', responses: [{ kind: 'sse', body: text('too late'), firstByteDelayMs: 600_000 }], failure: /^legion: ur-agent: no data from anthropic for 2 s\n$/ },
  { name: 'malformed SSE', responses: [sse(text('ok').replace('"text_delta","text":"ok"', '"text_delta","text":"ok'))], failure: /^legion: ur-agent: anthropic: malformed data in the response stream \(/ },
  { name: 'a 200 whose JSON body is not JSON', responses: [{ kind: 'raw', status: 200, contentType: 'application/json', body: 'Service Unavailable' }], failure: /^legion: ur-agent: anthropic: the response is not an event stream \(application\/json\): Service Unavailable\n$/ },
  { name: 'a 200 event stream of garbage', responses: [{ kind: 'raw', status: 200, contentType: 'text/event-stream', body: 'this is not\nserver-sent events at all\n\n' }], failure: /^legion: ur-agent: anthropic: the response stream ended before the reply was complete\n$/ },
  { name: 'an error event mid-stream (text so far kept)', responses: [sse(fixture('anthropic/error-overloaded-midstream.sse'))], failure: /^legion: ur-agent: anthropic: error in the response stream: overloaded_error: Overloaded\n$/ },
  {
    name: 'a fault on the second model call of a turn, after a tool batch',
    responses: [sse(anthropicStream({ text: ['Checking.'], tool: { id: 'toolu_lp', name: 'list_participants', json: ['{}'] } })), ...[1, 2, 3].map(() => err(503, 'api_error', 'unavailable'))],
    failure: /^legion: ur-agent: anthropic: 503 api_error: unavailable \(gave up after 2 retries\)\n$/,
  },
];

function assertReadable(r: CliRun, c: Case, ms: number): void {
  assert.doesNotMatch(r.stderr, /\n\s+at .+:\d+:\d+|TypeError|SyntaxError|ReferenceError|undefined/, `${c.name}: no stack trace: ${r.stderr}`);
  if (c.failure === null) {
    assert.equal(r.code, 0, `${c.name}: ${r.stderr}`);
    assert.equal(r.stdout, `${c.reply}\n`);
    assert.equal(r.stderr, '');
  } else {
    assert.equal(r.code, 3, `${c.name}: exit code (stderr ${r.stderr})`);
    assert.match(r.stderr, c.failure, c.name);
    assert.equal(r.stderr.split('\n').length, 2, `${c.name}: one line`);
  }
  if (c.minMs !== undefined) assert.ok(ms >= c.minMs, `${c.name}: waited ${ms} ms`);
}

test(`provider faults through legion run (${CASES.length} kinds): a readable line or a recovery, never a stack trace; the session stays valid and the next turn is accepted`, { timeout: 90_000 }, async () => {
  await withTempDir(async (dir) => {
    // Private like Legion makes them, so no tightening notice joins stderr (docs/cli-conventions.md).
    await mkdir(join(dir, '.legion'), { recursive: true, mode: 0o700 });
    // idleTimeoutMs 2 s: the idle cases hold the stream until the client gives up, so only the timeout ends them,
    // and a loaded machine never turns a normal reply's gaps into an idle error.
    await writeFile(join(dir, '.legion', 'config.yaml'), 'providers:\n  idleTimeoutMs: 2000\n  maxRetries: 2\n', { mode: 0o600 });
    const env = { HOME: dir, ANTHROPIC_API_KEY: 'sk-ant-test-faults', ANTHROPIC_BASE_URL: server.anthropicURL, LEGION_MODEL: 'claude-haiku-4-5' };
    await trustWorkspace(dir, env);
    const words: string[] = [];
    for (const [i, c] of CASES.entries()) {
      server.enqueue(...c.responses);
      const word = `case${i}`;
      words.push(word);
      const started = Date.now();
      const r = await runCli(['run', word], { cwd: dir, env, appDir: APP_DIR });
      assertReadable(r, c, Date.now() - started);
      if (process.env.LEGION_SHOW_FAULTS === '1') process.stderr.write(`${c.name}: exit ${r.code} ${r.stderr || r.stdout}`);
      assert.equal(server.pending(), 0, `${c.name}: every scripted response was used`);
    }
    server.enqueue(sse(text('all good now')));
    const last = await runCli(['run', 'final'], { cwd: dir, env, appDir: APP_DIR });
    assert.equal(last.code, 0, last.stderr);
    assert.equal(last.stdout, 'all good now\n');
    assert.deepEqual(server.requests.filter((r) => r.rejected).map((r) => r.rejected), [], 'no history was refused');
    // The last request carries every user message of the failed turns (merged where adjacent).
    const sent = JSON.stringify(server.requests.at(-1)!.body.messages);
    for (const word of [...words, 'final']) assert.ok(sent.includes(word), `${word} is in the history sent`);
    assert.ok(sent.includes('"text":"Hello'), 'text streamed before a mid-stream error is kept');

    const runs = join(dir, '.legion', 'runs');
    const [runId] = await readdir(runs);
    const lines = (await readFile(join(runs, runId!, 'sessions', 'session-user__ur-agent__default.jsonl'), 'utf8')).trim().split('\n');
    const messages = lines.map((l) => JSON.parse(l) as Message);
    assert.deepEqual(planRepair(messages, 'now'), { append: [], answered: [], problems: [] });
  });
});
