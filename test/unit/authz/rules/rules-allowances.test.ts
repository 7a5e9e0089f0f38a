import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { allowanceFor, allowancesFile, createAllowanceSet, readAllowances, type Allowance } from '../../../../src/authz/allowances';
import { appendJsonl } from '../../../../src/storage/jsonl';
import { layoutFor } from '../../../../src/storage/layout';
import type { CallToAuthorize } from '../../../../src/authz/types';
import { WORKSPACE } from '../../../helpers/rules';
import { withTempDir } from '../../../helpers/tmp';

const call = (toolName: string, input: unknown, participantId = 'dev', sessionId = 's1'): CallToAuthorize => ({ toolName, input, participantId, sessionId, chain: ['user', participantId] });

test('allowanceFor: the narrowest rule for each kind of tool', () => {
  const scope = (c: CallToAuthorize) => {
    const rule = allowanceFor(c, WORKSPACE);
    return { tool: rule.tool, participants: rule.participants, match: rule.match };
  };
  assert.deepEqual(scope(call('shell', { command: 'npm run build -- --prod' })), { tool: 'shell', participants: ['dev'], match: { command: { regex: 'npm run build -- --prod' } } });
  assert.deepEqual(scope(call('file_write', { path: './src/lib/a.ts', content: 'x' })).match, { path: 'src/lib/**' });
  assert.deepEqual(scope(call('file_edit', { path: '/ws/docs/../README.md', oldString: 'a', newString: 'b' })).match, { path: '*' });
  assert.deepEqual(scope(call('file_delete', { path: 'a[1]/b.txt' })).match, { path: 'a\\[1\\]/**' });
  assert.deepEqual(scope(call('grep', { pattern: 'x', path: 'src' })).match, { path: ['src', 'src/**'] });
  assert.deepEqual(scope(call('file_list', {})).match, { path: '**' });
  assert.deepEqual(scope(call('communicator', { targetId: 'scribe', message: 'hello' })).match, { targetId: 'scribe' });
  assert.deepEqual(scope(call('spawn_agent', { id: 'helper', name: 'H' })).match, { id: 'helper' });
  assert.deepEqual(scope(call('todo_write', { todos: [] })).match, undefined);
  assert.deepEqual(scope(call('mcp__gh__issue', { repo: 'a/b', n: 3, draft: false, labels: ['x'] })).match, { repo: { regex: 'a\\/b' }, n: { regex: '3' }, draft: { regex: 'false' } });
  assert.match(allowanceFor(call('shell', { command: 'ls' }), WORKSPACE).id, /^session-allow-[0-9a-f]{10}$/);
  assert.equal(allowanceFor(call('shell', { command: 'ls' }), WORKSPACE).reason, 'allowed for this session (shell: command = ls)');
});

test('allowance set: exact command, directory scope, participant and session scope', () => {
  const set = createAllowanceSet();
  assert.ok(set.add(call('shell', { command: 'npm test' }), WORKSPACE).ok);
  assert.ok(set.add(call('file_write', { path: 'src/lib/a.ts', content: '' }), WORKSPACE).ok);
  const has = (c: CallToAuthorize) => set.find(c, WORKSPACE) !== null;
  assert.equal(has(call('shell', { command: 'npm test' })), true);
  assert.equal(has(call('shell', { command: 'npm test ' })), false);
  assert.equal(has(call('shell', { command: 'npm test; rm -rf x' })), false);
  assert.equal(has(call('shell', { command: 'npm tests' })), false);
  assert.equal(has(call('shell', { command: 'NPM TEST' })), false);
  assert.equal(has(call('shell', { command: 'npm test' }, 'other')), false);
  assert.equal(has(call('shell', { command: 'npm test' }, 'dev', 's2')), false);
  assert.equal(has(call('file_write', { path: 'src/lib/b.ts', content: '' })), true);
  assert.equal(has(call('file_write', { path: 'src/lib/deep/c.ts', content: '' })), true);
  assert.equal(has(call('file_write', { path: './src/lib/../lib/b.ts', content: '' })), true);
  assert.equal(has(call('file_write', { path: 'src/other.ts', content: '' })), false);
  assert.equal(has(call('file_write', { path: 'src/lib/../../x.ts', content: '' })), false);
  assert.equal(has(call('file_edit', { path: 'src/lib/b.ts', oldString: 'a', newString: 'b' })), false);
  assert.equal(has(call('shell', { command: 'src/lib/b.ts' })), false);
});

test('allowance set: the same allowance twice is kept once, onAdd hears each new one; odd tool names are refused', () => {
  const added: Allowance[] = [];
  const set = createAllowanceSet({ onAdd: (a) => added.push(a) });
  const c = call('shell', { command: 'make' });
  const first = set.add(c, WORKSPACE, { grantedBy: 'user', at: new Date('2026-01-02T03:04:05Z') });
  const second = set.add(c, WORKSPACE);
  assert.ok(first.ok && second.ok);
  assert.equal(set.list().length, 1);
  assert.equal(added.length, 1);
  assert.equal(added[0]!.grantedBy, 'user');
  assert.equal(added[0]!.createdAt, '2026-01-02T03:04:05.000Z');
  const bad = set.add(call('shеll', { command: 'make' }), WORKSPACE);
  assert.ok(!bad.ok);
  assert.match(bad.error, /not a plain tool name/);
  const unknown = set.add(call('no_such_tool', {}), WORKSPACE);
  assert.ok(!unknown.ok);
  assert.match(unknown.error, /unknown tool "no_such_tool"/);
});

test('allowances persist as JSONL and come back (tolerating a torn line)', async () => {
  await withTempDir(async (dir) => {
    const file = allowancesFile(layoutFor(dir), 'run-1');
    assert.equal(file, join(dir, '.legion', 'runs', 'run-1', 'allowances.jsonl'));
    const set = createAllowanceSet({ onAdd: (a) => appendJsonl(file, a) });
    set.add(call('shell', { command: 'npm test' }), dir, { grantedBy: 'user' });
    set.add(call('communicator', { targetId: 'scribe', message: 'x' }), dir);
    await writeFile(file, (await readFile(file, 'utf8')) + '{"rule":');
    const read = await readAllowances(file);
    assert.equal(read.allowances.length, 2);
    assert.equal(read.issues.length, 1);
    const restored = createAllowanceSet({ initial: read.allowances });
    assert.notEqual(restored.find(call('shell', { command: 'npm test' }), dir), null);
    assert.deepEqual(await readAllowances(join(dir, 'missing.jsonl')), { allowances: [], issues: [] });
  });
});
