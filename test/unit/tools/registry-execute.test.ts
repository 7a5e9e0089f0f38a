import '../../helpers/own-home';
import { secretPathMatcher } from '../../../src/tools/sandbox/secrets';
import { DEFAULT_SECRET_PATTERNS } from '../../../src/tools/sandbox/secret-patterns';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { makeSandbox, makeToolContext } from '../../helpers/tool-context';
import { createBuiltinTools, createToolRegistry, toolDefinition } from '../../../src/tools/registry';
import { confinePathFields, describeInvalidInput, executeTool } from '../../../src/tools/execute-tool';
import { createMemoryTodoStore } from '../../../src/tools/todo-store';
import { capText, HeadTailBuffer } from '../../../src/tools/output-cap';
import type { Tool } from '../../../src/tools/types';

function spyTool(execute: Tool['execute'], pathFields?: string[]): Tool<{ path?: string; n?: number }> & { calls: number } {
  const tool = {
    name: 'spy',
    description: 'test tool',
    schema: z.strictObject({ path: z.string().optional(), n: z.number().optional() }),
    keyArgument: (input: { path?: string }) => input.path,
    pathFields,
    calls: 0,
    async execute(input: unknown, context: Parameters<Tool['execute']>[1]) {
      tool.calls += 1;
      return execute(input, context);
    },
  };
  return tool;
}

test('registry: builtins, lookup, globs in definitions, duplicate names refused', () => {
  const registry = createToolRegistry(createBuiltinTools({ secretPath: secretPathMatcher(DEFAULT_SECRET_PATTERNS),  todoStore: createMemoryTodoStore(), sandbox: 'none' }));
  const BUILTIN_TOOL_NAMES = ['file_read', 'file_write', 'file_edit', 'file_list', 'file_delete', 'glob', 'grep', 'shell', 'todo_write', 'todo_read', 'skill'];
  assert.deepEqual(registry.list().map((t) => t.name), BUILTIN_TOOL_NAMES);
  assert.equal(registry.get('grep')?.name, 'grep');
  assert.equal(registry.get('nope'), undefined);
  assert.deepEqual(registry.definitions(['todo_*', 'file_read', 'unknown', 'file_read']).map((d) => d.name), ['file_read', 'todo_write', 'todo_read']);
  assert.equal(registry.definitions().length, BUILTIN_TOOL_NAMES.length);
  assert.equal(registry.definitions(['*']).length, BUILTIN_TOOL_NAMES.length);
  assert.deepEqual(registry.definitions([]), []);
  assert.throws(() => createToolRegistry([...registry.list(), registry.get('shell')!]), /duplicate tool name: shell/);
});

test('definitions are JSON Schema objects of the zod input schemas', () => {
  const registry = createToolRegistry(createBuiltinTools({ secretPath: secretPathMatcher(DEFAULT_SECRET_PATTERNS),  todoStore: createMemoryTodoStore(), sandbox: 'none' }));
  for (const def of registry.definitions()) {
    assert.equal(def.inputSchema.type, 'object', def.name);
    assert.equal(def.inputSchema.$schema, undefined);
    assert.equal(def.inputSchema.additionalProperties, false, def.name);
    assert.ok(def.description.length > 20);
    assert.doesNotThrow(() => JSON.stringify(def));
  }
  const edit = toolDefinition(registry.get('file_edit')!);
  assert.deepEqual(edit.inputSchema.required, ['path', 'oldString', 'newString']);
  const props = edit.inputSchema.properties as Record<string, { type: string }>;
  assert.equal(props.replaceAll!.type, 'boolean');
  const todo = toolDefinition(registry.get('todo_write')!);
  const items = (todo.inputSchema.properties as any).todos.items;
  assert.deepEqual(items.properties.status.enum, ['pending', 'in_progress', 'done']);
});

test('executeTool: invalid input names field paths; the tool is not called', async () => {
  const spy = spyTool(async () => ({ content: 'ran' }));
  const ctx = makeToolContext('/nonexistent');
  const r = await executeTool(spy, { path: 1, n: 'x', zzz: true }, ctx);
  assert.equal(r.isError, true);
  assert.match(r.content, /^invalid input for spy: path: Invalid input: expected string, received number; n: .*expected number.*; \(input\): Unrecognized key: "zzz"$/);
  assert.equal(spy.calls, 0);
  const many = describeInvalidInput('t', Array.from({ length: 8 }, (_, i) => ({ path: ['a', i], message: 'bad' })));
  assert.equal(many, 'invalid input for t: a.0: bad; a.1: bad; a.2: bad; a.3: bad; a.4: bad (and 3 more problems)');
});

test('executeTool confines path fields before calling; confinePathFields normalizes them', async () => {
  const sb = await makeSandbox();
  try {
    const spy = spyTool(async () => ({ content: 'ran' }), ['path']);
    const ctx = makeToolContext(sb.root);
    for (const path of ['../outside/sentinel.txt', '/etc/passwd', '.legion/x', '~/x', 'a\0b']) {
      const r = await executeTool(spy, { path }, ctx);
      assert.equal(r.isError, true, path);
    }
    assert.equal(spy.calls, 0);
    assert.equal((await executeTool(spy, { path: 'ok.txt' }, ctx)).content, 'ran');
    assert.equal((await executeTool(spy, {}, ctx)).content, 'ran');
    assert.equal(spy.calls, 2);
    const norm = await confinePathFields(spy, { path: './a/../b//c.txt', n: 1 }, sb.root);
    assert.deepEqual(norm, { ok: true, input: { path: 'b/c.txt', n: 1 } });
    const aborted = await executeTool(spy, { path: 'ok.txt' }, makeToolContext(sb.root, { signal: AbortSignal.abort() }));
    assert.match(aborted.content, /interrupted before it started/);
    assert.equal(spy.calls, 2);
  } finally {
    await sb.cleanup();
  }
});

test('executeTool turns throws and bad results into error results, caps output, fills summary', async () => {
  const ctx = makeToolContext('/nonexistent', { limits: { shellTimeoutMs: 1000, toolOutputLimit: 2000 } });
  const thrower = spyTool(async () => {
    throw new Error('kaboom');
  });
  assert.deepEqual(await executeTool(thrower, {}, ctx), { content: 'spy failed: kaboom', isError: true, summary: 'spy failed: kaboom' });
  const stringThrower = spyTool(async () => {
    throw 'a string'; // eslint-disable-line no-throw-literal
  });
  assert.equal((await executeTool(stringThrower, {}, ctx)).content, 'spy failed: a string');
  const bad = spyTool(async () => undefined as never);
  assert.equal((await executeTool(bad, {}, ctx)).content, 'spy returned no usable result');
  const big = spyTool(async () => ({ content: `\n\nfirst line\n${'x'.repeat(10_000)}\nlast` }));
  const capped = await executeTool(big, {}, ctx);
  assert.ok(capped.content.length <= 2000);
  assert.match(capped.content, /characters omitted/);
  assert.ok(capped.content.endsWith('\nlast'));
  assert.equal(capped.summary, 'first line');
  const multi = spyTool(async () => ({ content: 'x', summary: 'a\nb' }));
  assert.equal((await executeTool(multi, {}, ctx)).summary, 'a b');
});

test('capText and HeadTailBuffer keep head and tail', () => {
  assert.equal(capText('short', 100), 'short');
  const capped = capText('a'.repeat(500) + 'b'.repeat(500), 200);
  assert.ok(capped.length <= 200);
  assert.ok(capped.startsWith('aaa') && capped.endsWith('bbb'));
  assert.match(capped, /… 800 characters omitted …/);

  const buf = new HeadTailBuffer(4, 4);
  buf.push(Buffer.from('head'));
  for (let i = 0; i < 1000; i += 1) buf.push(Buffer.from('middle'));
  buf.push(Buffer.from('ta'));
  buf.push(Buffer.from('il'));
  assert.equal(buf.totalBytes, 6008);
  assert.equal(buf.toString(), 'head\n… 6000 bytes omitted …\ntail');
  const small = new HeadTailBuffer(10, 10);
  small.push(Buffer.from('hello'));
  small.push(Buffer.from(' world'));
  assert.equal(small.toString(), 'hello world');
});
