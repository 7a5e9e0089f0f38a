import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { plainRunFile, readRunFile, runFileContent, runFileSchema } from '../../../src/session/run-file';
import type { RunRecord } from '../../../src/session/types';
import { ONE_SHOT } from '../../../src/storage/zod-validate';

/**
 * The run file's plain check (every resumed start reads its run file, `latest()` every run's;
 * the schema built at first use cost more than the read) against its schema, on run files as
 * JSON gives them: it accepts nothing the schema refuses, everything the schema accepts, and
 * returns what the schema's value gives. A change to the schema the check does not follow fails here.
 */
const RUN = { version: 1, id: '2026-11-28T09-00-35-3k81sm', createdAt: '2026-11-28T09:00:35.000Z', updatedAt: '2026-11-28T09:10:00.000Z' };

const VALUES: Record<string, unknown[]> = {
  version: [1, 0, 2, 1.5, '1', null, true, -1],
  id: ['x', '', ' ', 'ü日本', 7, null, ['x'], { id: 'x' }],
  createdAt: ['', 'x', 0, null, false],
  updatedAt: ['', 'x', 0, null, []],
  title: ['', 'A title', 't'.repeat(10_000), 3, null, ['t'], { t: 1 }, false],
};

function runFiles(): unknown[] {
  const out: unknown[] = [RUN, { ...RUN, title: 'first message' }, {}, [], null, 'run', 3, true, { ...RUN, extra: 1, sessionCount: 4 }];
  for (const [key, values] of Object.entries(VALUES)) for (const value of values) out.push({ ...RUN, [key]: value });
  for (const key of Object.keys(RUN)) {
    const missing: Record<string, unknown> = { ...RUN };
    delete missing[key];
    out.push(missing);
  }
  out.push(JSON.parse(`{"__proto__": {"title": 1}, ${JSON.stringify(RUN).slice(1)}`));
  out.push(JSON.parse(`{"constructor": "x", ${JSON.stringify(RUN).slice(1)}`));
  out.push([RUN]);
  return out;
}

test('the run file\'s plain check accepts exactly what its schema accepts, with the same record', () => {
  let accepted = 0;
  for (const value of runFiles()) {
    const schema = runFileSchema().safeParse(value, ONE_SHOT);
    const plain = plainRunFile(value);
    assert.equal(plain !== undefined, schema.success, `plain and schema disagree on ${JSON.stringify(value)}`);
    if (schema.success) {
      accepted += 1;
      assert.deepEqual(plain, runFileContent(schema.data as RunRecord), JSON.stringify(value));
      assert.deepEqual(Object.keys(plain!), Object.keys(runFileContent(schema.data as RunRecord)));
    }
  }
  assert.ok(accepted >= 8, `valid run files among the cases: ${accepted}`);
});

test('readRunFile: a good file is read without the schema, a damaged one is still named by the schema\'s fault', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'run.json');
    await mkdir(dir, { recursive: true });
    await writeFile(file, JSON.stringify({ ...RUN, title: 'hello', extra: true }));
    assert.deepEqual(await readRunFile(file, RUN.id), { ...RUN, title: 'hello' });
    await assert.rejects(readRunFile(file, 'other-run'), /id "2026-11-28T09-00-35-3k81sm" does not match its folder "other-run"/);
    await writeFile(file, JSON.stringify({ ...RUN, createdAt: '' }));
    await assert.rejects(readRunFile(file, RUN.id), /run\.json: createdAt: .*; the run file is damaged/);
    await writeFile(file, JSON.stringify({ ...RUN, title: 5 }));
    await assert.rejects(readRunFile(file, RUN.id), /run\.json: title: .*; the run file is damaged/);
  });
});
