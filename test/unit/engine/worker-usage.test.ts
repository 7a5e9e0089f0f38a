import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workerUsage } from '../../../src/cli/worker-usage';
import { readRunUsage } from '../../../src/runtime/usage-book';

const totals = (calls: number) => ({ calls, inputTokens: 10 * calls, outputTokens: 5 * calls, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null, partial: false, unpricedModels: [] });
/** usage.json as the hub writes it: a new file renamed into place. */
const writeUsage = (file: string, calls: number): void => {
  writeFileSync(`${file}.tmp`, JSON.stringify({ version: 1, run: totals(calls), sessions: { s1: totals(calls) } }));
  renameSync(`${file}.tmp`, file);
};

test('a worker parses the hub\'s usage.json again only when it was rewritten; each turn still starts from its totals', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'legion-worker-usage-'));
  try {
    const file = join(dir, 'usage.json');
    let reads = 0;
    const usage = workerUsage((f) => { reads += 1; return readRunUsage(f); });
    await usage.reseed(file);
    assert.equal(usage.totals().run.calls, 0, 'no file: zero');
    writeUsage(file, 2);
    await usage.reseed(file);
    assert.equal(usage.totals().run.calls, 2);
    usage.add({ sessionId: 's1', model: 'fake', inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null });
    assert.equal(usage.totals().run.calls, 3, 'its own call since');
    const before = reads;
    await usage.reseed(file);
    await usage.reseed(file);
    assert.equal(reads, before, 'unchanged: not read again');
    assert.equal(usage.totals().run.calls, 2, 'a reseed starts from the file\'s totals again');
    writeUsage(file, 7);
    await usage.reseed(file);
    assert.equal(reads, before + 1, 'rewritten: read again');
    assert.equal(usage.totals().run.calls, 7);
    assert.equal(usage.totals().sessions.s1?.calls, 7);
    rmSync(file);
    await usage.reseed(file);
    assert.equal(usage.totals().run.calls, 0, 'gone: zero');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('turns reseeding at once while the file is being read share that one read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'legion-worker-usage-'));
  try {
    const file = join(dir, 'usage.json');
    writeUsage(file, 4);
    let reads = 0;
    const usage = workerUsage((f) => { reads += 1; return readRunUsage(f); });
    await Promise.all(Array.from({ length: 20 }, () => usage.reseed(file)));
    assert.equal(reads, 1, '20 turns starting together: one read');
    assert.equal(usage.totals().run.calls, 4);
    let fail = true;
    const flaky = workerUsage(async (f) => {
      reads += 1;
      if (fail) throw new Error('read failed');
      return readRunUsage(f);
    });
    await assert.rejects(flaky.reseed(file), /read failed/);
    fail = false;
    const before = reads;
    await flaky.reseed(file);
    assert.equal(reads, before + 1, 'a failed read is not kept: the next turn reads again');
    assert.equal(flaky.totals().run.calls, 4);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
