import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/cli';
import { withTempDir } from '../helpers/tmp';
import { APP_DIR } from '../helpers/app-harness';
import { sse, startVendorServer } from '../helpers/vendor-server';
import { anthropicStream } from '../helpers/vendor-streams';
import { readLedger } from '../../src/events/ledger';
import { layoutFor } from '../../src/storage/layout';
import type { LegionEvent } from '../../src/events/types';

/** `legion run --json` prints every delta; `--coalesce` joins a session's deltas; the ledger joins them always. */

const deltasOf = (stdout: string): LegionEvent[] =>
  stdout.trim().split('\n').map((l) => JSON.parse(l) as LegionEvent).filter((e) => e.type === 'text-delta');

test('legion run --json keeps every text delta; --json --coalesce joins them; events.jsonl joins them', async () => {
  const server = await startVendorServer({ strictHistory: true });
  try {
    const parts = ['The ', 'collective ', 'has ', 'three ', 'members.'];
    server.enqueue(sse(anthropicStream({ text: parts })), sse(anthropicStream({ text: parts })));
    await withTempDir(async (dir) => {
      const env = { HOME: dir, ANTHROPIC_API_KEY: 'sk-ant-test-key-0123456789', ANTHROPIC_BASE_URL: server.anthropicURL };
      const every = await runCli(['run', '--json', 'who is here?'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(every.code, 0, every.stderr);
      const all = deltasOf(every.stdout);
      assert.deepEqual(all.map((e) => e.type === 'text-delta' && e.text), parts, 'one line per delta by default');

      const joined = await runCli(['run', '--json', '--coalesce', 'who is here?'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(joined.code, 0, joined.stderr);
      const few = deltasOf(joined.stdout);
      assert.ok(few.length < parts.length, `${few.length} lines for ${parts.length} deltas`);
      assert.equal(few.map((e) => e.type === 'text-delta' && e.text).join(''), parts.join(''));
      assert.equal(few.reduce((n, e) => n + (e.type === 'text-delta' ? e.joined ?? 1 : 0), 0), parts.length);

      // The ledger of the run joined the deltas of both turns.
      const runId = (JSON.parse(every.stdout.split('\n')[0]!) as LegionEvent).runId;
      const { events } = await readLedger(layoutFor(dir).events(runId));
      const stored = events.filter((e) => e.type === 'text-delta');
      assert.ok(stored.length <= 2 * few.length + 2, `${stored.length} ledger lines for ${2 * parts.length} deltas`);
      assert.equal(stored.reduce((n, e) => n + (e.type === 'text-delta' ? e.joined ?? 1 : 0), 0), 2 * parts.length);
    });
  } finally {
    await server.close();
  }
});

test('legion run --coalesce without --json is a usage error (exit 2, one line)', async () => {
  await withTempDir(async (dir) => {
    const r = await runCli(['run', '--coalesce', 'hi'], { cwd: dir, env: { HOME: dir }, appDir: APP_DIR });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'legion: --coalesce goes with --json (it joins the text deltas --json prints)\n');
  });
});
