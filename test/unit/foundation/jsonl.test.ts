import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { appendJsonl, openJsonlAppender, parseJsonl, readJsonl } from '../../../src/storage/jsonl';
import { zodValidator } from '../../../src/storage/zod-validate';
import { messageSchema } from '../../../src/model/message';
import { withTempDir } from '../../helpers/tmp';

test('appendJsonl: creates folders, one line per record, several records in one call, nothing for none', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'a', 'b', 'session.jsonl');
    appendJsonl(path, { n: 1 });
    appendJsonl(path, { n: 2, s: 'line\nbreak' }, { n: 3 });
    appendJsonl(path);
    assert.equal(await readFile(path, 'utf8'), '{"n":1}\n{"n":2,"s":"line\\nbreak"}\n{"n":3}\n');
    const { records, issues } = await readJsonl(path);
    assert.deepEqual(records, [{ n: 1 }, { n: 2, s: 'line\nbreak' }, { n: 3 }]);
    assert.deepEqual(issues, []);
  });
});

test('readJsonl: a missing file is empty, not an error', async () => {
  await withTempDir(async (dir) => {
    assert.deepEqual(await readJsonl(join(dir, 'nope.jsonl')), { records: [], issues: [] });
  });
});

test('readJsonl: other read errors are thrown (a folder is not a file)', async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(readJsonl(dir), /EISDIR/);
  });
});

test('readJsonl: a torn last line is dropped and reported as torn; all complete lines kept', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 's.jsonl');
    appendJsonl(path, { n: 1 }, { n: 2 });
    await appendFile(path, '{"n":3,"text":"half a wr');
    const { records, issues } = await readJsonl(path);
    assert.deepEqual(records, [{ n: 1 }, { n: 2 }]);
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.kind, 'torn');
    assert.equal(issues[0]!.line, 3);
    assert.equal(issues[0]!.file, path);
    assert.match(issues[0]!.message, new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3: dropped a torn last line \\(no final newline\\)$`));
  });
});

test('readJsonl: a broken middle line is reported with file and line number; the others are kept', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 's.jsonl');
    await writeFile(path, '{"n":1}\n\n{"n":2\n{"n":3}\n   \n');
    const { records, issues } = await readJsonl(path);
    assert.deepEqual(records, [{ n: 1 }, { n: 3 }]);
    assert.deepEqual(issues.map((i) => [i.line, i.kind]), [[3, 'invalid']]);
    assert.ok(issues[0]!.message.startsWith(`${path}:3: not valid JSON`), issues[0]!.message);
  });
});

test('appendJsonl after a torn tail: the new record gets its own line and is not lost', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 's.jsonl');
    appendJsonl(path, { n: 1 });
    await appendFile(path, '{"n":2,"te'); // crash mid-write
    appendJsonl(path, { n: 3 }); // the next run appends
    const appender = openJsonlAppender(path);
    appender.append({ n: 4 });
    appender.close();
    await appendFile(path, '{"n":5'); // and crashes again
    const appender2 = openJsonlAppender(path);
    appender2.append({ n: 6 }, { n: 7 });
    appender2.close();
    const { records, issues } = await readJsonl(path);
    assert.deepEqual(records, [{ n: 1 }, { n: 3 }, { n: 4 }, { n: 6 }, { n: 7 }]);
    assert.deepEqual(issues.map((i) => [i.line, i.kind]), [[2, 'invalid'], [5, 'invalid']]);
  });
});

test('openJsonlAppender: appends to an existing file; append after close is ignored', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'deep', 'e.jsonl');
    appendJsonl(path, { n: 0 });
    const appender = openJsonlAppender(path);
    appender.append({ n: 1 });
    appender.append();
    appender.append({ n: 2 }, { n: 3 });
    appender.close();
    appender.append({ n: 4 });
    appender.close();
    assert.equal(await readFile(path, 'utf8'), '{"n":0}\n{"n":1}\n{"n":2}\n{"n":3}\n');
  });
});

test('readJsonl with a zod validator: rejected lines are reported with line and key path', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 's.jsonl');
    const good = { role: 'user', content: [{ type: 'text', text: 'hi' }], at: 't' };
    appendJsonl(path, good, { role: 'robot', content: [], at: 't' }, good);
    const { records, issues } = await readJsonl(path, zodValidator(messageSchema));
    assert.equal(records.length, 2);
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.line, 2);
    assert.match(issues[0]!.message, /s\.jsonl:2: role: /);
  });
});

test('parseJsonl: a torn last line that ends in a newline is still torn; an empty text has nothing', () => {
  assert.deepEqual(parseJsonl('', 'f'), { records: [], issues: [] });
  const r = parseJsonl('{"a":1}\n{"a":\n\n', 'f');
  assert.deepEqual(r.records, [{ a: 1 }]);
  assert.deepEqual(r.issues.map((i) => [i.line, i.kind, i.message]), [[2, 'torn', 'f:2: dropped a torn last line']]);
});
