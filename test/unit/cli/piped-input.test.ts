import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { attachmentBlock, composeRunMessage, cutNote, readPipedInput } from '../../../src/cli/piped-input';
import { LegionError } from '../../../src/errors';

const stream = (...chunks: (string | Buffer)[]) => Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)));

test('piped input: read whole, counted, not cut under the cap', async () => {
  const input = await readPipedInput(stream('line 1\n', 'line 2\n'), { maxBytes: 100 });
  assert.deepEqual(input, { text: 'line 1\nline 2\n', totalBytes: 14, cut: false, overCeiling: false });
  assert.equal(cutNote(input), null);
});

test('piped input: cut at the cap on a character boundary, the rest counted', async () => {
  // "é" is two bytes: a cap of 5 would split the third one.
  const input = await readPipedInput(stream('éé', 'é', 'x'.repeat(1000)), { maxBytes: 5 });
  assert.equal(input.text, 'éé');
  assert.equal(input.totalBytes, 1006);
  assert.equal(input.cut, true);
  assert.match(cutNote(input)!, /was 1,006 bytes; only the first 4 bytes were sent/);
  assert.match(attachmentBlock(input), /^Piped input \(1,006 bytes; only the first 4 bytes are shown, the rest was cut\):\n```\néé\n```$/);
});

test('piped input: reading stops at the ceiling (an endless producer ends)', async () => {
  async function* endless() { for (;;) yield Buffer.alloc(1024, 0x79); }
  const input = await readPipedInput(endless(), { maxBytes: 10, ceiling: 8192 });
  assert.equal(input.overCeiling, true);
  assert.equal(input.text, 'y'.repeat(10));
  assert.match(cutNote(input)!, /over 8,192 bytes/);
});

test('piped input: binary input is refused with a usage error', async () => {
  await assert.rejects(readPipedInput(stream(Buffer.from([0x41, 0x00, 0x42]))), (e: unknown) => e instanceof LegionError && e.exitCode === 2 && /binary/.test(e.message));
});

test('piped input: a note once when nothing arrives for a while, none when data comes', async () => {
  let notes = 0;
  let release!: () => void;
  async function* slow() { await new Promise<void>((r) => (release = r)); yield Buffer.from('late'); }
  const reading = readPipedInput(slow(), { onWaiting: () => { notes += 1; release(); }, waitNoteMs: 1 });
  assert.equal((await reading).text, 'late');
  assert.equal(notes, 1);
  let quiet = 0;
  await readPipedInput(stream('now'), { onWaiting: () => void (quiet += 1), waitNoteMs: 60_000 });
  assert.equal(quiet, 0);
});

const piped = (text: string, extra: Partial<{ totalBytes: number; cut: boolean }> = {}) =>
  ({ text, totalBytes: Buffer.byteLength(text), cut: false, overCeiling: false, ...extra });

test('message: words + piped input → the input fenced under a header with its size', () => {
  assert.equal(composeRunMessage(['explain', 'this'], piped('a\nb')), 'explain this\n\nPiped input (3 bytes):\n```\na\nb\n```');
  // A fence longer than any backtick run inside.
  assert.equal(composeRunMessage(['q'], piped('x ```` y\n')), 'q\n\nPiped input (9 bytes):\n`````\nx ```` y\n`````');
  assert.equal(composeRunMessage(['q'], piped('')), 'q', 'empty input (</dev/null) attaches nothing');
  assert.equal(composeRunMessage(['q'], null), 'q');
});

test('message: "-" or no words → the piped input is the message; errors are usage errors', () => {
  assert.equal(composeRunMessage(['-'], piped('do it\n')), 'do it\n');
  assert.equal(composeRunMessage([], piped('do it')), 'do it');
  assert.match(composeRunMessage([], piped('abc', { totalBytes: 900, cut: true })), /^abc\n\n\(Piped input was 900 bytes; the rest after 3 bytes was cut\.\)$/);
  const usage = (words: string[], input: ReturnType<typeof piped> | null, re: RegExp) =>
    assert.throws(() => composeRunMessage(words, input), (e: unknown) => e instanceof LegionError && e.exitCode === 2 && re.test(e.message));
  usage(['-'], null, /stdin is a terminal/);
  usage([], null, /needs a message/);
  usage([], piped('  \n'), /needs a message/);
  usage(['a', '-'], piped('x'), /comes alone/);
});
