import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { APP_DIR, startAppHarness } from '../../helpers/app-harness';
import { KILL_CONFIG, READER, killScript } from '../../helpers/compaction-kill-child';
import { assertAllValid } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';
import { recordingFaux } from './helpers';

/**
 * docs/context.md, "On disk": a SIGKILL in the middle of a compaction (the summary request
 * under way) loses nothing. The child acknowledged N messages before the summary began; on
 * disk afterwards: every line a valid JSON message or context record, at least those N
 * messages, the same as before (prefix), no compaction record for the unfinished summary
 * (the old state: at most the eviction that came before it). The next start loads the run,
 * histories are valid, and the next turn compacts and answers.
 */
test('SIGKILL while a summary is being written: nothing lost, the file valid, the old state; the next start compacts and goes on', { timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    await mkdir(join(dir, 'ws'));
    const ws = join(dir, 'ws');
    await writeFile(join(ws, 'big.txt'), `${'lorem ipsum dolor sit amet '.repeat(90)}\n`);
    const child = spawn(process.execPath, ['--import', 'tsx', join(APP_DIR, 'test/helpers/compaction-kill-child.ts'), ws], { cwd: APP_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => void (err += d.toString()));
    const summarizing = await new Promise<{ sessionId: string; count: number }>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /^summarizing (\S+) (\d+)$/m.exec(out);
        if (m) resolve({ sessionId: m[1]!, count: Number(m[2]) });
      });
      child.once('exit', (code) => reject(new Error(`the child exited (${code}) before summarizing: ${err}`)));
    });
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    const acknowledged = [...out.matchAll(/^turn \d+ (\S+) (\d+)$/gm)].at(-1);
    assert.ok(acknowledged, `turns were acknowledged before the summary: ${out}`);
    assert.equal(acknowledged[1], summarizing.sessionId);

    // On disk: every line valid, the acknowledged messages all there, no record for the unfinished summary.
    const { layoutFor } = await import('../../../src/storage/layout');
    const { realpathSync, readdirSync } = await import('node:fs');
    const layout = layoutFor(realpathSync(ws));
    const runId = readdirSync(layout.runsDir)[0]!;
    const text = readFileSync(layout.sessionFile(runId, summarizing.sessionId), 'utf8');
    assert.ok(text.endsWith('\n'), 'no torn last line');
    const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as { type?: string; role?: string });
    const messages = lines.filter((l) => l.type === undefined);
    assert.ok(messages.length >= summarizing.count, `${messages.length} messages on disk, ${summarizing.count} acknowledged`);
    assert.ok(!lines.some((l) => l.type === 'compaction'), 'the unfinished summary left no record');

    // The next start: loads cleanly, valid histories, compacts (fast summary now) and answers.
    const provider = recordingFaux(killScript(0));
    const h = await startAppHarness({ dir: ws, provider, config: KILL_CONFIG, agents: [READER] });
    try {
      assert.equal(h.core.history(summarizing.sessionId).length >= summarizing.count, true);
      assertAllValid(h.core);
      // The estimate starts afresh after a restart: the summary comes back within a few turns.
      for (let i = 0; i < 20 && !provider.requests.some((r) => r.meta?.purpose === 'compaction'); i++) {
        const sent = h.core.send('reader', `after the restart ${i}: read big.txt`);
        assert.ok(sent.ok);
        assert.equal(sent.sessionId, summarizing.sessionId);
        assert.equal(await h.core.idle(sent.sessionId), 'I read it.');
      }
      assert.ok(provider.requests.some((r) => r.meta?.purpose === 'compaction'), 'the compaction ran again');
      assertAllValid(h.core);
      const after = readFileSync(layout.sessionFile(runId, summarizing.sessionId), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { type?: string });
      assert.ok(after.some((l) => l.type === 'compaction'), 'the new record');
      assert.deepEqual(after.slice(0, lines.length), lines, 'nothing before was rewritten');
    } finally {
      await h.close();
    }
  });
});
