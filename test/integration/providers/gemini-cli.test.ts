import '../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { startVendorServer, sse, fixture, type VendorServer } from '../../helpers/vendor-server';

// `legion run` with only GEMINI_API_KEY set: the run goes to Gemini's endpoint (here a local
// stand-in at GEMINI_BASE_URL) and its cost is priced from config/models.yaml.
const APP_DIR = fileURLToPath(new URL('../../../', import.meta.url));
let server: VendorServer;
before(async () => {
  server = await startVendorServer({ strictHistory: true });
});
after(() => server.close());

test('legion run --json with GEMINI_API_KEY: the Gemini endpoint answers, usage is priced, the key never shows', async () => {
  await withTempDir(async (dir) => {
    const key = 'AIzaSy-test-gemini-key-0123456789';
    server.enqueue(sse(fixture('gemini/text-stream.sse')));
    const r = await runCli(['run', '--json', 'hello'], { cwd: dir, env: { HOME: dir, GEMINI_API_KEY: key, GEMINI_BASE_URL: server.geminiURL }, appDir: APP_DIR });
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const answer = events.filter((e) => e.type === 'message-add' && e.message.role === 'assistant').at(-1);
    assert.equal(answer.message.content[0].text, 'Hello from Gemini.');
    const usage = events.find((e) => e.type === 'usage');
    assert.equal(usage.model, 'gemini-2.5-flash');
    // 12 input tokens at $0.30/M + 28 output tokens at $2.50/M.
    assert.ok(Math.abs(usage.costUsd - (12 * 0.3 + 28 * 2.5) / 1e6) < 1e-12, JSON.stringify(usage));
    const sent = server.requests.at(-1)!;
    assert.equal(sent.path, '/v1beta/openai/chat/completions');
    assert.equal(sent.body.model, 'gemini-2.5-flash');
    assert.ok(!r.stdout.includes(key) && !r.stderr.includes(key));
  });
});
