import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { forgetBuiltSchemas, lazySchema } from '../../../src/storage/lazy-schema';
import { executeTool } from '../../../src/tools/execute-tool';
import { fileReadTool } from '../../../src/tools/builtin/file-read';
import type { ToolContext } from '../../../src/tools/types';

test('a lazy schema is built at its first use, once, and validates as the schema it builds', () => {
  let builds = 0;
  const schema = lazySchema(() => {
    builds++;
    return z.strictObject({ path: z.string() });
  });
  assert.equal(builds, 0, 'not built when declared');
  const first = schema();
  assert.equal(builds, 1);
  assert.equal(schema(), first, 'the same schema after');
  assert.equal(builds, 1);
  assert.equal(schema().safeParse({ path: 'a' }).success, true);
  assert.equal(schema().safeParse({ path: 5 }).success, false);
  assert.equal(schema().safeParse({ path: 'a', extra: 1 }).success, false);
});

test('forgetBuiltSchemas drops the built ones; each is built again at its next use and still validates', () => {
  let builds = 0;
  const schema = lazySchema(() => {
    builds++;
    return z.strictObject({ n: z.number().int() });
  });
  lazySchema(() => {
    throw new Error('never used, never built');
  });
  const before = schema();
  assert.ok(forgetBuiltSchemas() >= 1);
  assert.equal(builds, 1, 'forgetting builds nothing');
  const after = schema();
  assert.equal(builds, 2);
  assert.notEqual(after, before);
  assert.equal(after.safeParse({ n: 1.5 }).success, false);
  assert.equal(before.safeParse({ n: 1.5 }).success, false, 'a schema still held keeps working');
});

test('a tool whose schema was forgotten (as after the snapshot build) still refuses bad arguments in one line, and the tool does not run', async () => {
  assert.equal(fileReadTool.schema.safeParse({ path: 'x' }).success, true);
  forgetBuiltSchemas();
  const context = { workspaceRoot: '/nonexistent-root', limits: { shellTimeoutMs: 1000, toolOutputLimit: 10_000 }, signal: new AbortController().signal } as unknown as ToolContext;
  const result = await executeTool(fileReadTool, { path: 5, limit: 0 }, context);
  assert.equal(result.isError, true);
  assert.match(result.content, /^invalid input for file_read: path: .*expected string.*; limit: /);
  assert.doesNotMatch(result.content, /\n/);
});
