import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import stringWidth from 'string-width';
import { cellWidth, fitPrefix, truncate } from '../../components/text/width';

test('cellWidth measures like string-width (Ink\'s measure) for every BMP character up to U+2BFF, alone and next to marks, selectors and joiners', () => {
  const wrong: string[] = [];
  for (let c = 0x20; c < 0x2c00; c++) {
    if (c >= 0x7f && c < 0xa0) continue;
    const ch = String.fromCharCode(c);
    for (const t of [ch, `a${ch}b`, `${ch}${ch}`, `${ch}\u0301`, `${ch}\ufe0f`, `x${ch}\u200d${ch}`]) {
      if (cellWidth(t) !== stringWidth(t)) wrong.push(`${c.toString(16)} ${JSON.stringify(t)}: ${cellWidth(t)} ≠ ${stringWidth(t)}`);
    }
  }
  assert.deepEqual(wrong.slice(0, 5), []);
  for (const t of ['界', '👍', '⚡', '❤️', 'é', 'e\u0301', '한국', '▶ user → scribe · notes ───', '⠋ thinking']) assert.equal(cellWidth(t), stringWidth(t), t);
});

test('fitPrefix and truncate cut at cells, wide characters whole', () => {
  assert.deepEqual(fitPrefix('── → ab', 4), { head: '── →', width: 4 });
  assert.deepEqual(fitPrefix('a界b', 2), { head: 'a', width: 1 });
  assert.equal(truncate('user → scribe · notes', 10), 'user → sc…');
  assert.equal(truncate('界界界', 4), '界…');
});
