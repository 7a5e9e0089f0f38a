import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { makeSandbox, makeToolContext } from '../../helpers/tool-context';
import { createFileTodoStore, createMemoryTodoStore } from '../../../src/tools/todo-store';
import { createTodoTools } from '../../../src/tools/builtin/todo';
import { executeTool } from '../../../src/tools/execute-tool';
import { layoutFor } from '../../../src/storage/layout';

test('todo_write / todo_read: per participant, persisted in .legion/runs/<run>/todos.json', async () => {
  const sb = await makeSandbox();
  try {
    const [write, read] = createTodoTools(createFileTodoStore(sb.root));
    const asA = makeToolContext(sb.root, { participantId: 'alpha' });
    const asB = makeToolContext(sb.root, { participantId: 'beta' });
    const w = await executeTool(write, {
      todos: [
        { id: '1', content: 'read the code', status: 'done' },
        { id: '2', content: 'fix the bug', status: 'in_progress' },
        { id: '3', content: 'write tests', status: 'pending' },
      ],
    }, asA);
    assert.equal(w.isError, undefined, w.content);
    assert.equal(w.content, '3 todos: 1 done, 1 in progress, 1 pending\n[x] 1: read the code\n[>] 2: fix the bug\n[ ] 3: write tests');
    assert.equal(w.summary, '3 todos: 1 done, 1 in progress, 1 pending');
    await executeTool(write, { todos: [{ id: 'b', content: 'beta task', status: 'pending' }] }, asB);

    // A fresh store reads what the first wrote: it is on disk.
    const [, read2] = createTodoTools(createFileTodoStore(sb.root));
    assert.equal((await executeTool(read2, {}, asA)).content, w.content);
    assert.match((await executeTool(read, {}, asB)).content, /\[ \] b: beta task/);
    assert.equal((await executeTool(read, {}, makeToolContext(sb.root, { participantId: 'gamma' }))).content, '(no todos)');
    const onDisk = JSON.parse(await readFile(layoutFor(sb.root).todos('run-test'), 'utf8'));
    assert.equal(onDisk.version, 1);
    assert.deepEqual(Object.keys(onDisk.participants).sort(), ['alpha', 'beta']);

    const cleared = await executeTool(write, { todos: [] }, asA);
    assert.equal(cleared.summary, 'todo list cleared');
    assert.equal((await executeTool(read, {}, asA)).content, '(no todos)');
  } finally {
    await sb.cleanup();
  }
});

test('parallel writes by many participants lose nothing', async () => {
  const sb = await makeSandbox();
  try {
    const store = createFileTodoStore(sb.root);
    const [write] = createTodoTools(store);
    await Promise.all(Array.from({ length: 20 }, (_, i) =>
      executeTool(write, { todos: [{ id: `t${i}`, content: `task ${i}`, status: 'pending' }] }, makeToolContext(sb.root, { participantId: `p${i}` }))));
    for (let i = 0; i < 20; i += 1) assert.deepEqual(await store.read('run-test', `p${i}`), [{ id: `t${i}`, content: `task ${i}`, status: 'pending' }]);
  } finally {
    await sb.cleanup();
  }
});

test('todo tools: invalid input and a damaged file are error results; the damaged file is kept', async () => {
  const sb = await makeSandbox();
  try {
    const [write, read] = createTodoTools(createFileTodoStore(sb.root));
    const ctx = makeToolContext(sb.root);
    const cases: [unknown, RegExp][] = [
      [{}, /todos: .*expected array/],
      [{ todos: [{ id: '1', content: 'x', status: 'started' }] }, /todos\.0\.status: Invalid option/],
      [{ todos: [{ id: '', content: 'x', status: 'done' }] }, /todos\.0\.id: /],
      [{ todos: [{ id: '1', content: 'x', status: 'done', extra: 1 }] }, /Unrecognized key/],
      [{ todos: [{ id: '1', content: 'x', status: 'done' }, { id: '1', content: 'y', status: 'done' }] }, /todos\.1\.id: duplicate id "1"/],
      [{ todos: Array.from({ length: 101 }, (_, i) => ({ id: `${i}`, content: 'x', status: 'done' })) }, /todos: .*<=100/],
    ];
    for (const [input, pattern] of cases) {
      const r = await executeTool(write, input, ctx);
      assert.equal(r.isError, true, JSON.stringify(input).slice(0, 80));
      assert.match(r.content, pattern);
    }
    assert.match((await executeTool(read, { x: 1 }, ctx)).content, /Unrecognized key/);

    const file = layoutFor(sb.root).todos('run-test');
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, '{"version":1,"participants":{"agent":[{"id":1}]}}');
    const bad = await executeTool(read, {}, ctx);
    assert.equal(bad.isError, true);
    assert.match(bad.content, /todos\.json is damaged \(participants\.agent\.0\.id: /);
    const refused = await executeTool(write, { todos: [] }, ctx);
    assert.equal(refused.isError, true);
    assert.equal(await readFile(file, 'utf8'), '{"version":1,"participants":{"agent":[{"id":1}]}}');
    await writeFile(file, '{"version":1,"partic');
    assert.match((await executeTool(read, {}, ctx)).content, /not valid JSON/);
  } finally {
    await sb.cleanup();
  }
});

test('memory todo store has the same contract', async () => {
  const store = createMemoryTodoStore();
  await store.write('r', 'a', [{ id: '1', content: 'x', status: 'done' }]);
  assert.deepEqual(await store.read('r', 'a'), [{ id: '1', content: 'x', status: 'done' }]);
  assert.deepEqual(await store.read('r', 'b'), []);
  await assert.rejects(createFileTodoStore('/tmp').read('../x', 'a'), /invalid run id/);
});
