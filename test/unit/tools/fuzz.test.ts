import '../../helpers/own-home';
import { secretPathMatcher } from '../../../src/tools/sandbox/secrets';
import { DEFAULT_SECRET_PATTERNS } from '../../../src/tools/sandbox/secret-patterns';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeSandbox, makeToolContext, type Sandbox } from '../../helpers/tool-context';
import { createBuiltinTools } from '../../../src/tools/registry';
import { createFileTodoStore } from '../../../src/tools/todo-store';
import { createGrepTool } from '../../../src/tools/builtin/grep';
import { createShellTool } from '../../../src/tools/builtin/shell';
import { executeTool } from '../../../src/tools/execute-tool';
import type { Tool } from '../../../src/tools/types';
import { prng as rng } from '../../helpers/prng';

/**
 * Hostile input fuzzing (issue 9): random and adversarial inputs to every builtin tool via
 * executeTool, while a concurrent "attacker" keeps swapping a workspace directory for a
 * symlink to the outside. Invariants: executeTool never rejects; the result is well formed
 * and within the output limit; input the schema rejects is always an error result; nothing
 * outside the workspace and nothing under .legion changes; no secret leaks into a result.
 * Quick with a fixed seed by default; LEGION_FUZZ_LONG=1 runs many more iterations with a random
 * seed; LEGION_FUZZ_SEED replays.
 */
const LONG = process.env.LEGION_FUZZ_LONG === '1';
const ITERATIONS = LONG ? 20_000 : 600;
/** A fixed seed by default (CI reproduces itself); the long mode draws one. Printed in the test name. */
const SEED = Number(process.env.LEGION_FUZZ_SEED ?? (LONG ? Math.floor(Math.random() * 2 ** 31) : 20261123));
const OUTPUT_LIMIT = 4000;


function makeGen(random: () => number, sb: Sandbox) {
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const chars = ['a', 'b', '.', '/', '\\', '~', '\0', '*', '?', '{', '}', '[', ']', '(', ')', '+', '|', '^', '$', ' ', '\n', '\r', 'é', 'L', 'E', 'G', 'I', 'O', 'N', '\u200B', '\uFF0E', '\u0301', '💥', ',', '-', '!'];
  const randomString = (max: number) => Array.from({ length: int(max) }, () => pick(chars)).join('');
  const pathTricks = [
    '..', '../outside/sentinel.txt', 'a/../../outside', join(sb.outside, 'sentinel.txt'), '/etc/passwd', '/', '~', '~/x',
    '.legion', '.legion/secret.json', '.LEGION/secret.json', './.legion', 'x/../.legion/secret.json', '.legion./secret.json',
    '.Legion/', '.legion'.normalize('NFD'), '\uFF0Elegion', '.le\u200Bgion/secret.json', 'flip', 'flip/sentinel.txt',
    'flip/new/file.txt', 'out-link', 'dangling/x', 'a\0b', 'ok.txt', 'dir/ok.txt', 'dir', '.', '', 'dir/../ok.txt', 'sentinel.txt',
  ];
  const hugeString = () => pick(['x', '../', '.legion/', '\0', 'é']).repeat(pick([1000, 70_000, 300_000]));
  const stringValue = (): string => {
    switch (int(6)) {
      case 0: return pick(pathTricks);
      case 1: return randomString(40);
      case 2: return hugeString();
      case 3: return pick(pathTricks) + '/' + randomString(10);
      case 4: return pick(['(a+)+$', '^(a|a)*$', '[', '(?<', '\\', '*', '.*', 'needle', 'do not touch', '{1..100000000}', '**/*', '**/.legion/**', '../**', '[^', 'a{99999}']);
      default: return pick(['', ' ', 'do not touch', 'PWNED', 'line\nline\n']);
    }
  };
  const anyValue = (depth = 0): unknown => {
    switch (int(depth > 1 ? 7 : 9)) {
      case 0: return int(1e6) - 5e5;
      case 1: return pick([NaN, Infinity, -0, 1e308, 0.5, -1]);
      case 2: return random() < 0.5;
      case 3: return null;
      case 4: return undefined;
      case 5:
      case 6: return stringValue();
      case 7: return Array.from({ length: int(4) }, () => anyValue(depth + 1));
      default: return Object.fromEntries(Array.from({ length: int(4) }, () => [pick(['path', 'content', '__proto__', 'constructor', 'x']), anyValue(depth + 1)]));
    }
  };
  const fields: Record<string, string[]> = {
    file_read: ['path', 'offset', 'limit'],
    file_write: ['path', 'content'],
    file_edit: ['path', 'oldString', 'newString', 'replaceAll'],
    file_list: ['path'],
    file_delete: ['path'],
    glob: ['pattern', 'path'],
    grep: ['pattern', 'path', 'glob', 'ignoreCase'],
    shell: ['command', 'timeoutMs'],
    todo_write: ['todos'],
    todo_read: [],
    skill: ['name', 'file'],
  };
  const shellCommand = (): string => {
    // Never run random text as a command: print a (quoted) hostile payload instead.
    const payload = stringValue().replace(/'/g, `'\\''`);
    return pick([`printf '%s' '${payload}'`, `echo '${payload}' >&2; exit ${int(3)}`, `yes | head -c ${int(3_000_000)}`, 'sleep 5']);
  };
  const fieldValue = (tool: string, field: string): unknown => {
    if (random() < 0.25) return anyValue();
    switch (field) {
      case 'offset':
      case 'limit': return pick([1, 2, 1000, 0, -3, 1.5, 2 ** 53, '3']);
      case 'replaceAll':
      case 'ignoreCase': return pick([true, false, 'true', 1]);
      case 'timeoutMs': return pick([1, 50, 200, 0, -1, 1e12, '100']);
      case 'command': return shellCommand();
      case 'todos': return Array.from({ length: int(4) }, () => ({ id: pick(['1', '2', '', stringValue()]), content: stringValue(), status: pick(['pending', 'in_progress', 'done', 'started', 3]) }));
      default: return tool === 'shell' ? shellCommand() : stringValue();
    }
  };
  const input = (tool: string): unknown => {
    if (random() < 0.1) return anyValue();
    const obj: Record<string, unknown> = {};
    for (const f of fields[tool]!) if (random() < 0.85) obj[f] = fieldValue(tool, f);
    if (random() < 0.1) obj[pick(['extra', 'cwd', '__proto__', 'file_path'])] = anyValue();
    return obj;
  };
  return { input, int, pick };
}

test(`fuzz: ${ITERATIONS} hostile inputs to every tool (seed ${SEED})`, { timeout: LONG ? 3_600_000 : 60_000 }, async () => {
  const sb = await makeSandbox('legion-fuzz-');
  const random = rng(SEED);
  const gen = makeGen(random, sb);
  const tools: Tool[] = createBuiltinTools({ secretPath: secretPathMatcher(DEFAULT_SECRET_PATTERNS),  todoStore: createFileTodoStore(sb.root), sandbox: 'none' }).map((t) =>
    t.name === 'grep' ? createGrepTool({ regexTimeoutMs: 200, secretPath: secretPathMatcher(DEFAULT_SECRET_PATTERNS) }) : t.name === 'shell' ? createShellTool({ killGraceMs: 100, drainMs: 50, sandbox: 'none' }) : t,
  );
  await mkdir(join(sb.root, 'dir'), { recursive: true });
  await writeFile(join(sb.root, 'ok.txt'), 'needle\ndo not touch? no, this one is inside\n');
  await symlink(join(sb.outside, 'sentinel.txt'), join(sb.root, 'out-link'));
  await symlink(join(sb.outside, 'nowhere'), join(sb.root, 'dangling'));
  await mkdir(join(sb.root, 'flip'));
  const outsideBefore = await sb.outsideSnapshot();
  const legionSecret = join(sb.root, '.legion', 'secret.json');
  const legionBefore = await readFile(legionSecret, 'utf8');

  // The attacker: every few ms, `flip` alternates between a real directory and a symlink out.
  let attacking = true;
  let flips = 0;
  const attacker = (async () => {
    while (attacking) {
      try {
        await rename(join(sb.root, 'flip'), join(sb.root, 'flip-parked'));
        await symlink(sb.outside, join(sb.root, 'flip'));
        await new Promise((r) => setTimeout(r, 1));
        await rm(join(sb.root, 'flip'), { force: true });
        await rename(join(sb.root, 'flip-parked'), join(sb.root, 'flip'));
      } catch {
        // a tool deleted or replaced something: reset both names
        await rm(join(sb.root, 'flip'), { force: true, recursive: true }).catch(() => undefined);
        await rm(join(sb.root, 'flip-parked'), { force: true, recursive: true }).catch(() => undefined);
        await mkdir(join(sb.root, 'flip'), { recursive: true }).catch(() => undefined);
        await writeFile(join(sb.root, 'flip', 'sentinel.txt'), 'inside decoy\n').catch(() => undefined);
      }
      flips += 1;
      await new Promise((r) => setTimeout(r, 1));
    }
  })();

  const counts = { calls: 0, errors: 0, invalid: 0 };
  try {
    for (let i = 0; i < ITERATIONS; i += 1) {
      const tool = gen.pick(tools);
      const input = gen.input(tool.name);
      const valid = tool.schema.safeParse(input).success;
      const controller = new AbortController();
      if (tool.name === 'shell' && gen.int(4) === 0) setTimeout(() => controller.abort(), gen.int(50));
      const ctx = makeToolContext(sb.root, { signal: controller.signal, limits: { shellTimeoutMs: 300, toolOutputLimit: OUTPUT_LIMIT } });
      const where = `iteration ${i} (seed ${SEED}) ${tool.name} ${JSON.stringify(input)?.slice(0, 200)}`;
      let result;
      try {
        result = await executeTool(tool, input, ctx);
      } catch (error) {
        assert.fail(`executeTool rejected at ${where}: ${String(error)}`);
      }
      counts.calls += 1;
      assert.equal(typeof result.content, 'string', where);
      assert.ok(result.isError === undefined || result.isError === true, where);
      assert.equal(typeof result.summary, 'string', where);
      assert.ok(result.content.length <= OUTPUT_LIMIT, `${where}: ${result.content.length} chars`);
      assert.doesNotMatch(result.content, /legion-state|0xOUTSIDE/, where);
      if (!valid) {
        counts.invalid += 1;
        assert.equal(result.isError, true, `invalid input accepted at ${where}`);
        assert.match(result.content, /^invalid input for /, where);
      }
      if (result.isError) counts.errors += 1;
      if (i % 50 === 49) {
        assert.equal(await sb.outsideSnapshot(), outsideBefore, `outside changed by ${where}`);
        assert.equal(await readFile(legionSecret, 'utf8'), legionBefore, where);
      }
    }
  } finally {
    attacking = false;
    await attacker;
  }
  assert.equal(await sb.outsideSnapshot(), outsideBefore);
  assert.equal(await readFile(legionSecret, 'utf8'), legionBefore);
  assert.ok(counts.invalid > ITERATIONS / 10, `too few invalid inputs: ${JSON.stringify(counts)}`);
  assert.ok(counts.calls - counts.errors > 0, 'some calls must succeed');
  assert.ok(flips > 10, `attacker flipped ${flips} times`);
  console.log(`fuzz: ${JSON.stringify({ ...counts, flips, seed: SEED })}`);
  await sb.cleanup();
});
