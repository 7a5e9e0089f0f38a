import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { appendFileSync, mkdirSync, renameSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createProjectionFollower, type FollowerFs } from '../../../src/engine/projection-follower';
import { catchUp } from '../../../src/engine/hub-turn';
import { resetProjection } from '../../../src/engine/projection';
import { readSessionFile } from '../../../src/session/session-files';
import { createSessionStore } from '../../../src/session/session-store';
import { layoutFor } from '../../../src/storage/layout';
import { dropTornTail } from '../../../src/storage/jsonl';
import type { Message } from '../../../src/model/message';
import { withTempDir } from '../../helpers/tmp';

const SESSION = 'session-user__builder__default';
const RUN = 'r1';

let clock = Date.parse('2026-11-27T10:00:00.000Z');
/** Message `n`: a user line for even n, an assistant line for odd n, each with its own timestamp. */
const message = (n: number, text = `message ${n} ${'x'.repeat(200)}`): Message => ({
  role: n % 2 === 0 ? 'user' : 'assistant',
  content: [{ type: 'text', text }],
  at: new Date(clock++).toISOString(),
});
const lines = (...messages: unknown[]): string => messages.map((m) => `${JSON.stringify(m)}\n`).join('');

/** A follower over a temp workspace's session file, counting the bytes it reads. */
function setup(root: string) {
  const layout = layoutFor(root);
  const file = layout.sessionFile(RUN, SESSION);
  mkdirSync(join(file, '..'), { recursive: true });
  let bytesRead = 0;
  const counting: FollowerFs = {
    ...fs,
    readSync: ((...args: Parameters<typeof fs.readSync>) => {
      const n = fs.readSync(...args);
      bytesRead += n;
      return n;
    }) as typeof fs.readSync,
  };
  const follower = createProjectionFollower((id) => layout.sessionFile(RUN, id), counting);
  /** What a catch-up reading the whole file (the hub before the follower) gives after `held` messages. */
  const fresh = async (held: number): Promise<Message[]> => ((await readSessionFile(layout, RUN, SESSION))?.messages ?? []).slice(held);
  const read = (): number => { const n = bytesRead; bytesRead = 0; return n; };
  return { file, follower, fresh, read, layout };
}

test('a session file that grows between turns: only what was appended is read, and the same messages as a full read', async () => {
  await withTempDir(async (root) => {
    const { file, follower, fresh, read } = setup(root);
    const history = Array.from({ length: 2000 }, (_, n) => message(n));
    writeFileSync(file, lines(...history));
    assert.deepEqual(follower.since(SESSION, 0), history);
    assert.ok(read() >= statSync(file).size, 'the first catch-up reads the file');

    const turn = [message(2000), message(2001)];
    const appended = lines(...turn);
    appendFileSync(file, appended);
    assert.deepEqual(follower.since(SESSION, 2000), turn);
    assert.deepEqual(turn, await fresh(2000));
    const bytes = read();
    // The new lines, plus the kept tail compared before the offset (4 kB), never the history.
    assert.ok(bytes <= Buffer.byteLength(appended) + 4096, `read ${bytes} bytes for ${Buffer.byteLength(appended)} appended`);

    // Nothing appended: nothing but the tail is read, nothing returned.
    assert.deepEqual(follower.since(SESSION, 2002), []);
    assert.ok(read() <= 4096);
  });
});

test("a worker's reset (a replay truncating the projection and appending again) is read in full: the same messages as a fresh catch-up", async () => {
  await withTempDir(async (root) => {
    const { file, layout, fresh } = setup(root);
    const base = join(layout.runDir(RUN), 'projection', `${SESSION}.base.json`);
    writeFileSync(file, lines(message(0), message(1)));
    resetProjection(file, base, 'inv_a');
    // The dead attempt's appends, which the hub caught up with (its ingress call failed).
    appendFileSync(file, lines(message(2, 'cut'.repeat(100)), message(3, 'cut'.repeat(100))));
    const followers = [4, 3, 2].map((held) => ({ held, follower: setup(root).follower }));
    for (const { follower } of followers) assert.equal(follower.since(SESSION, 0)?.length, 4);
    // The replay: cut back to the base, the turn appended again in more, shorter lines (the file regrows past the offset).
    resetProjection(file, base, 'inv_a');
    appendFileSync(file, lines(...Array.from({ length: 10 }, (_, i) => message(2 + i, 'replayed'))));
    assert.ok(statSync(file).size > Buffer.byteLength(lines(message(0), message(1), message(2, 'cut'.repeat(100)), message(3, 'cut'.repeat(100)))));
    for (const { held, follower } of followers) assert.deepEqual(follower.since(SESSION, held), await fresh(held), `held ${held}`);
    assert.equal((await fresh(4)).length, 8);
  });
});

test('a file truncated below the offset, or rewritten in place with other bytes, is read in full', async () => {
  await withTempDir(async (root) => {
    const { file, follower, fresh } = setup(root);
    const first = [message(0), message(1), message(2)];
    writeFileSync(file, lines(...first));
    assert.equal(follower.since(SESSION, 0)?.length, 3);
    // Cut to one line, then three short ones: four messages, the file still shorter than the offset.
    truncateSync(file, Buffer.byteLength(lines(first[0])));
    appendFileSync(file, lines(message(1, 'a'), message(2, 'b'), message(3, 'c')));
    assert.ok(statSync(file).size < Buffer.byteLength(lines(...first)));
    assert.deepEqual(follower.since(SESSION, 3), await fresh(3));
    assert.equal(follower.since(SESSION, 4)?.length, 0);

    // Rewritten in place (same inode), more messages in the same bytes, then grown past the offset.
    const before = lines(message(0), message(1, 'x'.repeat(600)));
    writeFileSync(file, before);
    const other = setup(root).follower;
    assert.equal(other.since(SESSION, 0)?.length, 2);
    const shorter = lines(message(0), message(1, 'y'), message(2, 'z'));
    const rewritten = shorter + lines(message(3, 'w'.repeat(Buffer.byteLength(before) - Buffer.byteLength(shorter) - Buffer.byteLength(lines(message(3, ''))))));
    assert.equal(Buffer.byteLength(rewritten), Buffer.byteLength(before));
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, rewritten + lines(message(4)), 0);
    fs.closeSync(fd);
    const expected = await fresh(2);
    assert.equal(expected.length, 3);
    assert.deepEqual(other.since(SESSION, 2), expected);
  });
});

test('a file replaced by another (a rename over it) is read in full, even when its bytes before the offset end alike', async () => {
  await withTempDir(async (root) => {
    const { file, follower, fresh } = setup(root);
    const m1 = message(1, 'z'.repeat(6000));
    const old = lines(message(0, 'a'.repeat(3000)), m1);
    writeFileSync(file, old);
    assert.equal(follower.since(SESSION, 0)?.length, 2);
    // Three messages where there were two, the last ending with the very 4 kB the follower kept, then one more.
    const c = lines({ ...m1, role: 'user', content: [{ type: 'text', text: 'z'.repeat(5000) }] });
    const a = lines(message(10, 'b'));
    const fill = Buffer.byteLength(old) - Buffer.byteLength(a) - Buffer.byteLength(c) - Buffer.byteLength(lines(message(11, '')));
    const replaced = a + lines(message(11, 'c'.repeat(fill))) + c;
    assert.equal(Buffer.byteLength(replaced), Buffer.byteLength(old));
    assert.equal(replaced.slice(-4096), old.slice(-4096));
    writeFileSync(`${file}.new`, replaced + lines(message(12)));
    renameSync(`${file}.new`, file);
    const expected = await fresh(2);
    assert.equal(expected.length, 2);
    assert.deepEqual(follower.since(SESSION, 2), expected);
    // Removed: null, as a full read; created again: read from its start.
    fs.rmSync(file);
    assert.equal(follower.since(SESSION, 4), null);
    writeFileSync(file, lines(message(0)));
    assert.deepEqual(follower.since(SESSION, 0), await fresh(0));
  });
});

test('a caller holding fewer messages than were read gets them from a full read', async () => {
  await withTempDir(async (root) => {
    const { file, follower, fresh } = setup(root);
    writeFileSync(file, lines(message(0), message(1), message(2)));
    follower.since(SESSION, 3);
    assert.deepEqual(follower.since(SESSION, 1), await fresh(1));
    assert.equal(follower.since(SESSION, 1)?.length, 2);
  });
});

test('a last line being appended while the hub reads is not consumed: it comes once, when complete', async () => {
  await withTempDir(async (root) => {
    const { file, layout } = setup(root);
    writeFileSync(file, lines(message(0)));
    const next = JSON.stringify(message(1));
    const half = next.slice(0, 40);
    let reads = 0;
    // The writer appends half a line between the hub's first and second read.
    const racing: FollowerFs = {
      ...fs,
      readSync: ((...args: Parameters<typeof fs.readSync>) => {
        const n = fs.readSync(...args);
        if (++reads === 1) appendFileSync(file, half);
        return n;
      }) as typeof fs.readSync,
    };
    const follower = createProjectionFollower((id) => layout.sessionFile(RUN, id), racing);
    assert.equal(follower.since(SESSION, 0)?.length, 1);
    assert.ok(reads >= 2, 'the follower read on after the half line was written');
    assert.deepEqual(follower.since(SESSION, 1), [], 'the half line is not a message');
    appendFileSync(file, `${next.slice(40)}\n`);
    assert.deepEqual(follower.since(SESSION, 1), [JSON.parse(next)]);
    assert.deepEqual(follower.since(SESSION, 2), []);
  });
});

test('a torn tail cut by a load (dropTornTail) and a line longer than a read chunk are followed exactly', async () => {
  await withTempDir(async (root) => {
    const { file, follower, fresh } = setup(root);
    writeFileSync(file, lines(message(0)) + '{"role":"assist');
    assert.equal(follower.since(SESSION, 0)?.length, 1);
    dropTornTail(file);
    const long = message(1, 'y'.repeat(200_000));
    appendFileSync(file, lines(long, { type: 'compaction', at: long.at, summary: 's', firstKept: 1, tokensBefore: 10, tokensAfter: 5 }, message(2)));
    assert.deepEqual(follower.since(SESSION, 1), await fresh(1));
    assert.equal(follower.since(SESSION, 3)?.length, 0);
  });
});

test("catchUp appends to the hub's in-memory session what the projection holds beyond it, turn after turn", async () => {
  await withTempDir(async (root) => {
    const { file, follower } = setup(root);
    const store = createSessionStore(layoutFor(root), RUN, { clock: () => new Date(), writtenElsewhere: true });
    const { session } = store.open({ initiatorId: 'user', responderId: 'builder', name: 'default' });
    writeFileSync(file, lines(message(0), message(1)));
    catchUp(session, follower);
    appendFileSync(file, lines(message(2), message(3)));
    catchUp(session, follower);
    catchUp(session, follower);
    assert.deepEqual(session.messages().map((m) => (m.content[0] as { text: string }).text.split(' ').slice(0, 2).join(' ')), ['message 0', 'message 1', 'message 2', 'message 3']);
  });
});
