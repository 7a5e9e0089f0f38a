import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { lastLedgerSeq } from '../../../src/runtime/ledger-seq';
import { conflictKeys, runScheduled } from '../../../src/runtime/parallel';
import type { CallRun } from '../../../src/runtime/call-state';
import type { Tool } from '../../../src/tools/types';
import { withTempDir } from '../../helpers/tmp';

test('lastLedgerSeq: 0 for a missing file; the last complete event, skipping a torn tail; works past the first chunk', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'events.jsonl');
    assert.equal(await lastLedgerSeq(file), 0);
    const line = (seq: number): string => JSON.stringify({ seq, at: 'x', runId: 'r', type: 'notice', level: 'info', message: 'm'.repeat(200) }) + '\n';
    let text = '';
    for (let seq = 1; seq <= 1000; seq++) text += line(seq);
    await writeFile(file, text);
    assert.equal(await lastLedgerSeq(file), 1000);
    await appendFile(file, '{"seq":1001,"at":"x","runId":"r","type":"no');
    assert.equal(await lastLedgerSeq(file), 1000);
    // One huge event bigger than the first read window.
    await writeFile(file, line(7) + JSON.stringify({ seq: 8, type: 'notice', message: 'x'.repeat(300_000) }) + '\n');
    assert.equal(await lastLedgerSeq(file), 8);
  });
});

const root = '/ws';
const tool = (name: string, pathFields?: string[]): Tool => ({
  name, description: '', schema: z.any(), keyArgument: () => undefined, ...(pathFields ? { pathFields } : {}), execute: async () => ({ content: '' }),
});
const call = (t: Tool, input: unknown): CallRun => ({ phase: 'run', use: { type: 'tool_use', id: `${t.name}-${JSON.stringify(input)}`, name: t.name, input }, tool: t, input });

test('conflictKeys: paths resolve against the workspace; shells share a key; other calls have none', () => {
  const write = tool('file_write', ['path']);
  assert.deepEqual(conflictKeys(root, call(write, { path: 'a/../b.txt' })), ['path:/ws/b.txt']);
  assert.deepEqual(conflictKeys(root, call(tool('shell'), { command: 'ls' })), ['shell']);
  assert.deepEqual(conflictKeys(root, call(tool('communicator'), { targetId: 'x' })), []);
});

test('runScheduled: conflicting calls run in order, the others in parallel; an abort returns at once', async () => {
  const write = tool('file_write', ['path']);
  const log: string[] = [];
  const calls = [call(write, { path: 'a' }), call(write, { path: 'b' }), call(write, { path: 'a', n: 2 })];
  const ms: Record<string, number> = { [calls[0]!.use.id]: 30, [calls[1]!.use.id]: 5, [calls[2]!.use.id]: 1 };
  await runScheduled(root, calls, new AbortController().signal, async (c) => {
    log.push(`start ${c.use.id}`);
    await new Promise((r) => setTimeout(r, ms[c.use.id]));
    log.push(`end ${c.use.id}`);
  });
  const [first, second, third] = calls.map((c) => c.use.id);
  assert.ok(log.indexOf(`start ${second}`) < log.indexOf(`end ${first}`), 'b runs beside a');
  assert.ok(log.indexOf(`start ${third}`) > log.indexOf(`end ${first}`), 'the second write of a waits for the first');

  const controller = new AbortController();
  const started = Date.now();
  setTimeout(() => controller.abort(), 20);
  await runScheduled(root, [call(write, { path: 'x' }), call(write, { path: 'y' })], controller.signal, () => new Promise(() => undefined));
  // The calls never end by themselves, so returning at all is the abort at work; 10 s only guards against a hang (a loaded machine is slow, not that slow).
  assert.ok(Date.now() - started < 10_000);
});
