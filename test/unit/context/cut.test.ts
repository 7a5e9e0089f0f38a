import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Message } from '../../../src/model/message';
import { chooseFirstKept, isCutPoint } from '../../../src/context/cut';
import { requestView } from '../../../src/context/view';
import { sanitizeForProvider } from '../../../src/model/repair';
import { prng } from '../../helpers/prng';
import { assistant, call, result, user } from './helpers';

/** A random valid history: turns of text and tool batches (several calls per message sometimes). */
function randomHistory(random: () => number, length: number): Message[] {
  const out: Message[] = [user('start')];
  let n = 0;
  while (out.length < length) {
    const last = out[out.length - 1]!;
    if (last.role === 'user') {
      const calls = Math.floor(random() * 3);
      if (calls === 0) out.push(assistant(`a${n++}`));
      else {
        const ids = Array.from({ length: calls }, () => `t${n++}`);
        out.push({ role: 'assistant', content: ids.map((id) => ({ type: 'tool_use' as const, id, name: 'shell', input: {} })), at: '' });
        out.push({ role: 'user', content: ids.map((id) => ({ type: 'tool_result' as const, toolUseId: id, content: 'x'.repeat(Math.floor(random() * 500)) })), at: '' });
      }
    } else out.push(user(`u${n++}`));
  }
  return out;
}

test('cut points: never a message of tool results (its tool_use would be summarized away)', () => {
  const h = [user('q'), call('a'), result('a', 'r'), assistant('done'), user('next')];
  assert.deepEqual(h.map((_, i) => isCutPoint(h, i)), [true, true, false, true, true]);
});

test('property: at every cut point the kept part starts with no orphan result and sanitizing changes nothing', () => {
  for (let seed = 1; seed <= 40; seed++) {
    const random = prng(seed);
    const history = randomHistory(random, 10 + Math.floor(random() * 60));
    for (let keep = 1; keep <= 3000; keep += 37) {
      const first = chooseFirstKept(history, 0, keep);
      assert.ok(first === 0 || isCutPoint(history, first), `seed ${seed} keep ${keep}: cut at ${first}`);
      const view = requestView(history, { summary: 'S', firstKept: first, evictBefore: first, compactions: 1 }, 100_000);
      const kept = view.slice(first > 0 ? 1 : 0);
      // Every tool_use sent has its result in the next message, and every result follows its use.
      for (let i = 0; i < kept.length; i++) {
        for (const b of kept[i]!.content) {
          if (b.type === 'tool_result') {
            const prev = kept[i - 1];
            assert.ok(prev?.content.some((u) => u.type === 'tool_use' && u.id === b.toolUseId), `seed ${seed} keep ${keep}: orphan result at ${i}`);
          }
        }
      }
      // The request is already what a provider accepts: sanitizing drops no result.
      const results = (ms: readonly Message[]): number => ms.reduce((n, m) => n + m.content.filter((b) => b.type === 'tool_result').length, 0);
      assert.equal(results(sanitizeForProvider(view)), results(view), `seed ${seed} keep ${keep}`);
    }
    // And exhaustively: every index chooseFirstKept may return is a cut point.
    for (let i = 1; i < history.length; i++) {
      if (!isCutPoint(history, i)) assert.equal(history[i]!.content.some((b) => b.type === 'tool_result'), true);
    }
  }
});

test('chooseFirstKept: the earliest cut whose tail fits, else the latest cut; never before `from`', () => {
  const h = [user('q'.repeat(400)), call('a'), result('a', 'r'.repeat(4000)), assistant('done'), user('next'), assistant('ok')];
  // A budget that holds only the last two messages.
  assert.equal(chooseFirstKept(h, 0, 12), 4);
  assert.equal(chooseFirstKept(h, 0, 20), 3);
  // Nothing fits: the latest cut point.
  assert.equal(chooseFirstKept(h, 0, 1), 5);
  // A budget that holds everything after index 1: the tail starts at 1 (the call with its result).
  assert.equal(chooseFirstKept(h, 0, 100_000), 1);
  assert.equal(chooseFirstKept(h, 4, 100_000), 5);
  assert.equal(chooseFirstKept([user('a')], 0, 10), 0);
});
