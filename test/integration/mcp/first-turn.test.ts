import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAppHarness, type AppHarness } from '../../helpers/app-harness';
import { makeTempDir } from '../../helpers/tmp';
import { recordingFaux } from '../context/helpers';

const SLOW_SERVER = join(import.meta.dirname, '..', '..', 'fixtures', 'mcp', 'slow-start-server.mjs');

/**
 * The real composition root with one MCP server, from the user's own config (trusted, unlike a
 * workspace's .mcp.json), that answers `initialize` only once the test releases it; agent
 * `pinger` holds its tools. The message is sent before anything started the servers, as a fast
 * typist's would be right after the first frame.
 */
async function withSlowServer(fn: (h: AppHarness, provider: ReturnType<typeof recordingFaux>, sessionId: string, release: () => void) => Promise<void>): Promise<void> {
  const temp = await makeTempDir('legion-mcp-first-turn-');
  const releaseFile = join(temp.dir, 'release-server');
  const release = (): void => writeFileSync(releaseFile, '');
  const userConfig = join(temp.dir, '.legion', 'test-home', '.config', 'legion');
  mkdirSync(userConfig, { recursive: true, mode: 0o700 });
  writeFileSync(join(userConfig, 'config.yaml'), JSON.stringify({
    mcpServers: { slow: { command: process.execPath, args: [SLOW_SERVER], env: { RELEASE_FILE: releaseFile } } },
  }), { mode: 0o600 });
  const provider = recordingFaux('version: 1\nreplies:\n  - on: message\n    repeat: true\n    text: "hello"\n');
  const h = await startAppHarness({ dir: temp.dir, provider, agents: [{ id: 'pinger', tools: ['mcp__slow__*'] }] });
  try {
    const sent = h.core.send('pinger', 'use the ping tool');
    assert.ok(sent.ok);
    await h.waitFor((e) => e.type === 'notice' && e.message.includes('waiting for MCP server slow'), 10_000);
    assert.equal(provider.requests.length, 0, 'no request while the server starts');
    // The message is kept (on disk, in the history) while the turn waits: a crash loses nothing.
    assert.deepEqual(h.core.history(sent.sessionId).map((m) => m.role), ['user']);
    await fn(h, provider, sent.sessionId, release);
  } finally {
    release();
    await h.close();
    await temp.cleanup();
  }
}

test('a message sent while an MCP server is still starting waits for it: the first request already offers its tools', async () => {
  await withSlowServer(async (h, provider, sessionId, release) => {
    release();
    await h.core.idle(sessionId);
    assert.equal(provider.requests.length, 1);
    const offered = provider.requests[0]!.tools.map((t) => t.name);
    assert.ok(offered.includes('mcp__slow__ping'), `the first request offers mcp__slow__ping: ${offered.join(', ')}`);
  });
});

test('Esc while the first turn waits for a starting MCP server ends the turn at once, the message kept', async () => {
  await withSlowServer(async (h, provider, sessionId) => {
    const cancelledAt = Date.now();
    h.core.cancel(sessionId);
    await h.core.idle(sessionId);
    // At once, not when the 10 s cap of the wait runs out (5 s leaves a loaded machine room).
    assert.ok(Date.now() - cancelledAt < 5_000, `the turn ended ${Date.now() - cancelledAt} ms after Esc`);
    assert.equal(h.core.lastOutcome(sessionId)?.kind, 'interrupted');
    assert.equal(provider.requests.length, 0, 'the model was never called');
    assert.equal(h.core.history(sessionId)[0]?.role, 'user', 'the message is kept');
  });
});
