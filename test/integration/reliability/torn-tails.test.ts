import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dropTornTail } from '../../../src/storage/jsonl';
import { attachLedger, readLedger } from '../../../src/events/ledger';
import { createBus } from '../../../src/events/bus';
import { withTempDir } from '../../helpers/tmp';

/**
 * Torn tails of append-only files (a crash or power loss mid-write): the ledger drops them
 * when it is attached (under the run lock), so every line of events.jsonl parses afterwards;
 * sessions and approvals do the same on load (covered by their owners and crash.test.ts).
 */
test('dropTornTail: cuts bytes after the last newline that do not parse; completes a line that does; leaves clean files alone', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'x.jsonl');
    assert.equal(dropTornTail(join(dir, 'missing.jsonl')), null);
    await writeFile(file, '');
    assert.equal(dropTornTail(file), null);
    await writeFile(file, '{"a":1}\n{"b":2}\n');
    assert.equal(dropTornTail(file), null);
    assert.equal(await readFile(file, 'utf8'), '{"a":1}\n{"b":2}\n');

    await writeFile(file, '{"a":1}\n{"b":');
    const issue = dropTornTail(file);
    assert.equal(issue?.kind, 'torn');
    assert.equal(issue?.message, `${file}: dropped a torn last line (5 bytes, cut mid-write)`);
    assert.equal(await readFile(file, 'utf8'), '{"a":1}\n');

    await writeFile(file, '{"a":1}\n{"b":2}');
    assert.equal(dropTornTail(file), null);
    assert.equal(await readFile(file, 'utf8'), '{"a":1}\n{"b":2}\n');

    // A torn line with no newline at all in the file, and one longer than the read chunk.
    await writeFile(file, '{"only": "torn');
    assert.ok(dropTornTail(file));
    assert.equal(await readFile(file, 'utf8'), '');
    const big = `{"x":"${'y'.repeat(200_000)}"}\n`;
    await writeFile(file, big + big.slice(0, 150_000));
    assert.ok(dropTornTail(file));
    assert.equal(await readFile(file, 'utf8'), big);
  });
});

test('attachLedger over a torn ledger: the fragment is cut and reported, new events follow on clean lines', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'events.jsonl');
    const first = createBus({ runId: 'r1' });
    const ledger = attachLedger(first, file);
    first.emit({ type: 'run-start', resumed: false });
    first.emit({ type: 'notice', level: 'info', message: 'hello' });
    ledger.close();
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.slice(0, text.length - 12));

    const second = createBus({ runId: 'r1', startSeq: 1 });
    const again = attachLedger(second, file);
    assert.deepEqual(again.issues.map((i) => i.kind), ['torn']);
    second.emit({ type: 'run-start', resumed: true });
    again.close();
    const read = await readLedger(file);
    assert.deepEqual(read.issues, []);
    assert.deepEqual(read.events.map((e) => [e.seq, e.type]), [[1, 'run-start'], [2, 'run-start']]);
  });
});
