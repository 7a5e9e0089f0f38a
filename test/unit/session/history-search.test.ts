import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, stat } from 'node:fs/promises';
import { matchRanges, queryPattern, searchRunHistory } from '../../../src/session/history-search';
import { transcriptLines } from '../../../src/session/transcript';
import { withTempDir } from '../../helpers/tmp';
import { msg, writeRuns } from '../../helpers/history-fixture';
import { keyArgumentOf } from '../../../src/collective/tools/shipped';

test('finds a word across the sessions of a run, case-insensitive, with session, message index and line', async () => {
  await withTempDir(async (root) => {
    const { layout, runs } = await writeRuns(root, [{
      at: new Date('2026-01-02T10:00:00Z'),
      sessions: [
        { initiatorId: 'user', responderId: 'ur-agent', messages: [msg('user', 'hello'), msg('assistant', 'The Pelican is\na large bird')] },
        { initiatorId: 'ur-agent', responderId: 'scribe', name: 'notes', messages: [msg('user', 'write about pelicans'), msg('assistant', 'ok')] },
        { initiatorId: 'user', responderId: 'scribe', messages: [msg('user', 'nothing here')] },
      ],
    }]);
    const result = await searchRunHistory(layout, runs[0]!.id, 'PELICAN', keyArgumentOf);
    assert.equal(result.sessionsSearched, 3);
    assert.equal(result.truncated, false);
    assert.deepEqual(result.hits.map((h) => [h.sessionId, h.messageIndex, h.line]), [
      ['session-ur-agent__scribe__notes', 0, '  write about pelicans'],
      ['session-user__ur-agent__default', 1, '  The Pelican is'],
    ]);
    const hit = result.hits[1]!;
    assert.deepEqual(hit.ranges, [[6, 13]]);
    assert.equal(hit.line.slice(6, 13), 'Pelican');
    // lineIndex points into the transcript the browser shows.
    const lines = transcriptLines({ initiatorId: 'user', responderId: 'ur-agent', name: 'default' }, [msg('user', 'hello'), msg('assistant', 'The Pelican is\na large bird')], keyArgumentOf);
    assert.equal(lines[hit.lineIndex]!.text, hit.line);
  });
});

test('tool calls are searched by their key argument; regex characters are literal; blank query finds nothing', async () => {
  await withTempDir(async (root) => {
    const { layout, runs } = await writeRuns(root, [{
      at: new Date('2026-01-02T10:00:00Z'),
      sessions: [{
        initiatorId: 'user', responderId: 'ur-agent',
        messages: [
          msg('user', 'go'),
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'file_write', input: { path: 'docs/a(1).md', content: 'x' } }], at: '2026-01-02T10:00:01.000Z' },
          { role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: 'wrote docs/a(1).md' }], at: '2026-01-02T10:00:02.000Z' },
        ],
      }],
    }]);
    const result = await searchRunHistory(layout, runs[0]!.id, 'a(1).md', keyArgumentOf);
    assert.deepEqual(result.hits.map((h) => h.line.trim()), ['⚙ file_write docs/a(1).md', '↳ ok: wrote docs/a(1).md']);
    assert.equal((await searchRunHistory(layout, runs[0]!.id, '.*', keyArgumentOf)).hits.length, 0);
    assert.equal((await searchRunHistory(layout, runs[0]!.id, '   ', keyArgumentOf)).hits.length, 0);
  });
});

test('hits are capped at maxHits with truncated set; a missing run is empty; nothing is written', async () => {
  await withTempDir(async (root) => {
    const many = Array.from({ length: 30 }, (_, i) => msg(i % 2 === 0 ? 'user' : 'assistant', `word ${i}`));
    const { layout, runs } = await writeRuns(root, [{ at: new Date('2026-01-02T10:00:00Z'), sessions: [{ initiatorId: 'user', responderId: 'a', messages: many }] }]);
    const dir = layout.sessionsDir(runs[0]!.id);
    const before = (await stat(`${dir}/session-user__a__default.jsonl`)).mtimeMs;
    const capped = await searchRunHistory(layout, runs[0]!.id, 'word', keyArgumentOf, { maxHits: 10 });
    assert.equal(capped.hits.length, 10);
    assert.equal(capped.truncated, true);
    const all = await searchRunHistory(layout, runs[0]!.id, 'word', keyArgumentOf);
    assert.equal(all.hits.length, 30);
    assert.equal(all.truncated, false);
    assert.deepEqual(await readdir(dir), ['session-user__a__default.jsonl']);
    assert.equal((await stat(`${dir}/session-user__a__default.jsonl`)).mtimeMs, before);
    assert.deepEqual(await searchRunHistory(layout, 'no-such-run', 'word', keyArgumentOf), { hits: [], truncated: false, sessionsSearched: 0 });
  });
});

test('matchRanges: every occurrence, Unicode case folding', () => {
  assert.deepEqual(matchRanges('abcABCabc', queryPattern('bc')), [[1, 3], [4, 6], [7, 9]]);
  assert.deepEqual(matchRanges('Straße STRASSE', queryPattern('straße')), [[0, 6]]);
  assert.deepEqual(matchRanges('ÉCOLE école', queryPattern('école')), [[0, 5], [6, 11]]);
  assert.deepEqual(matchRanges('x', null), []);
});
