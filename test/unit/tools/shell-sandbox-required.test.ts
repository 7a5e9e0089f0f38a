import '../../helpers/own-home';
import { secretPathMatcher } from '../../../src/tools/sandbox/secrets';
import { DEFAULT_SECRET_PATTERNS } from '../../../src/tools/sandbox/secret-patterns';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createShellTool } from '../../../src/tools/builtin/shell';
import { createBuiltinTools } from '../../../src/tools/registry';
import { createMemoryTodoStore } from '../../../src/tools/todo-store';

/**
 * The sandbox decision is a required parameter (docs/sandbox.md): a shell built without one would
 * run every command unconfined. Leaving it out fails to compile (`tsc --noEmit` checks the
 * `@ts-expect-error` lines: they fail once the parameter is optional again) and, for a caller that
 * got around the type, throws instead of building an unconfined shell.
 */
test('shell cannot be built without a sandbox decision', () => {
  assert.throws(
    () =>
      // @ts-expect-error the sandbox is required
      createShellTool({ killGraceMs: 300 }),
    /sandbox is required/,
  );
  assert.throws(
    () =>
      // @ts-expect-error the sandbox is required
      createBuiltinTools({ secretPath: secretPathMatcher(DEFAULT_SECRET_PATTERNS),  todoStore: createMemoryTodoStore() }),
    /sandbox is required/,
  );
});

test("'none' is an explicit, visible choice: the tool says it runs unsandboxed", () => {
  assert.equal(createShellTool({ sandbox: 'none' }).sandboxed, false);
  const shell = createBuiltinTools({ secretPath: secretPathMatcher(DEFAULT_SECRET_PATTERNS),  todoStore: createMemoryTodoStore(), sandbox: 'none' }).find((t) => t.name === 'shell');
  assert.equal(shell?.sandboxed, false);
});
